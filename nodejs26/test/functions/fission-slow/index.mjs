// A Fission function whose module takes longer to load than the test's one-second call timeout, as one
// with heavy dependencies can.
await new Promise((resolve) => setTimeout(resolve, 1500));

export default async () => ({ status: 200, body: 'loaded slowly' });
