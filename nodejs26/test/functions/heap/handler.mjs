// What V8 was started with, and with ?mb=N a call that holds N MB of ordinary
// arrays (16 KB each, so they pass through the young generation) at once.
import v8 from 'node:v8';

export function main(req) {
  const mb = Number(req.query.mb ?? 0);
  const held = [];
  for (let i = 0; i < mb * 64; i += 1) held.push(new Array(2048).fill(i + 0.5));
  return {
    execArgv: process.execArgv,
    heldMb: Math.round(v8.getHeapStatistics().used_heap_size / 1048576),
    arrays: held.length,
  };
}
