// stop() never returns (STOP_HANGS=1, the default); start() takes START_MS.
export async function start() {
  console.log('start hook began');
  await new Promise((r) => setTimeout(r, Number(process.env.START_MS ?? 0)));
  console.log('start hook returned');
}
export function stop() {
  console.log('stop hook began');
  if ((process.env.STOP_HANGS ?? '1') === '1') return new Promise((r) => setTimeout(r, 1e7));
  console.log('stop hook returned');
}
export function main() { return 'ok'; }
