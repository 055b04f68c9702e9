// Work that stops when nobody waits for it: the cancellation tests' function.
import { cancelled, emitCloudEvent, getLogger } from 'sdk';

export async function main(req) {
  const id = req.query.id ?? '';
  if (req.path === '/publish') {
    // A publisher proxy that never answers: the publish stops when the call is cancelled.
    try {
      await emitCloudEvent('order.created', '/shop', { id });
      return 'published';
    } catch (error) {
      getLogger().info(`publish ${id}: ${error.message}`);
      return 'not published';
    }
  }
  const aborted = new Promise((resolve) => req.signal.addEventListener('abort', resolve, { once: true }));
  await aborted;
  getLogger().info(`signal ${id} aborted; cancelled() ${cancelled()}`);
  return 'cancelled';
}
