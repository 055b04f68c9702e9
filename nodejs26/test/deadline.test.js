// Past its deadline a call answers 408, whatever the function does next (it was told through
// req.signal or sdk.cancelled(), and answers anyway); before it, the function's answer goes out.
// Each call is read whole off a raw socket: exactly one status line reaches the wire.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, test } from 'node:test';
import { functions, startRuntime } from './helpers.js';

const CALL_TIMEOUT = 0.3;
const CALLS = 12;
let runtime;

before(async () => {
  runtime = await startRuntime({ HANDLER_FOLDER: functions('told-it-timed-out'), SERVER_CALL_TIMEOUT: String(CALL_TIMEOUT), SERVER_ACCESS_LOG: 'true' });
});

after(async () => {
  await runtime?.stop();
});

/** Everything the runtime sent for one call, until it closed the connection: [{ status, body }]. */
function exchange(target, requestId) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    const socket = net.connect(runtime.port, '127.0.0.1', () => {
      socket.write(`GET ${target} HTTP/1.1\r\nHost: test\r\nX-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n`);
    });
    socket.setTimeout(5000, () => { socket.destroy(); reject(new Error(`no end to ${target} within 5 s: ${Buffer.concat(chunks)}`)); });
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('end', () => {
      const wire = Buffer.concat(chunks).toString('latin1');
      const heads = [...wire.matchAll(/(?:^|\r\n)HTTP\/1\.1 (\d{3})[^\r\n]*\r\n/g)];
      resolve(heads.map((head, index) => {
        const rest = wire.slice(head.index + head[0].length, index + 1 < heads.length ? heads[index + 1].index : wire.length);
        return { status: Number(head[1]), body: rest.slice(rest.indexOf('\r\n\r\n') + 4) };
      }));
    });
  });
}

/**
 * A function that blocked the event loop past SERVER_QUEUE_TARGET (which a short call timeout lowers
 * to itself) leaves admission refusing calls until the loop's lag is measured under it again: poll
 * until a quick call is admitted.
 */
async function admitted() {
  for (let tries = 0; tries < 100; tries += 1) {
    const [answer] = await exchange('/quick', `quick-${Date.now()}`);
    if (answer.status === 200) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error('calls still refused after 100 tries');
}

const accessStatuses = (requestId) => runtime.records().filter((record) => record.request_id === requestId && 'status' in record).map((record) => record.status);

for (const [target, how] of [['/signal', 'req.signal, yielding at every turn'], ['/sync', 'sdk.cancelled(), never yielding'], ['/write', 'nothing, then a first res.write()']]) {
  test(`told it timed out through ${how}, the function never gets its answer out: ${CALLS} calls, each one 408`, async () => {
    const ids = Array.from({ length: CALLS }, (_, index) => `told-${target.slice(1)}-${index}-${Date.now()}`);
    const wrong = [];
    for (const id of ids) {
      await admitted();
      const answers = await exchange(`${target}?seconds=${target === '/write' ? CALL_TIMEOUT * 1.5 : 60}`, id);
      if (answers.length !== 1 || answers[0].status !== 408 || answers[0].body !== 'Timeout while processing the function') wrong.push([id, answers]);
    }
    assert.deepEqual(wrong, []);
    await runtime.waitFor(() => ids.every((id) => accessStatuses(id).length > 0), 'an access record per call');
    for (const id of ids) assert.deepEqual(accessStatuses(id), [408], id);
  });
}

test('a function that answers before its deadline keeps its answer', async () => {
  for (const target of ['/signal', '/sync']) {
    await admitted();
    const id = `in-time-${target.slice(1)}-${Date.now()}`;
    assert.deepEqual(await exchange(`${target}?seconds=${CALL_TIMEOUT / 3}`, id), [{ status: 200, body: 'in time' }]);
  }
});

test('the 408s are counted as calls cancelled by their timeout', async () => {
  const text = await (await runtime.fetch('/metrics')).text();
  assert.match(text, new RegExp(`^function_cancelled_total\\{cause="timeout"\\} ${3 * CALLS}$`, 'm'));
});
