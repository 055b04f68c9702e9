// The I/O-bound function for nodejs26: it waits BENCH_WAIT_SECONDS (50 ms by default), then answers.
const WAIT_MS = Number(process.env.BENCH_WAIT_SECONDS ?? '0.05') * 1000;

export async function main() {
  await new Promise((resolve) => setTimeout(resolve, WAIT_MS));
  return 'Hello, world!';
}
