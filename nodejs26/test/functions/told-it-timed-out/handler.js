// Stops the moment it is told it timed out, and answers anyway: the runtime must still answer 408.
// ?seconds=S answers 'in time' after S seconds if it was not told by then.
import { cancelled } from 'sdk';

export async function main(req, res) {
  if (req.path === '/quick') return 'quick';
  const began = performance.now();
  const limit = Number(req.query.seconds ?? '60') * 1000;
  if (req.path === '/sync') {
    // sdk.cancelled() asked without ever yielding: only the clock can tell it.
    while (!cancelled()) if (performance.now() - began > limit) return 'in time';
    return 'done';
  }
  if (req.path === '/write') {
    // Busy past the deadline without asking, then a first write: the 408 goes out, not this.
    while (performance.now() - began < limit);
    res.write('late');
    res.end();
    return undefined;
  }
  while (!req.signal.aborted) {
    if (performance.now() - began > limit) return 'in time';
    await new Promise((resolve) => setImmediate(resolve));
  }
  return 'done';
}
