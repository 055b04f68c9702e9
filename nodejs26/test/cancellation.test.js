// A call whose client leaves is cancelled: req.signal aborts, sdk.cancelled() says so, the
// sdk's publish in flight stops, and function_cancelled_total counts it by cause.
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { after, before, test } from 'node:test';
import { functions, startRuntime } from './helpers.js';

let runtime;
let proxy;
const held = [];

before(async () => {
  proxy = http.createServer((req, res) => { held.push(res); }); // takes the event, never answers
  await new Promise((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  runtime = await startRuntime({ HANDLER_FOLDER: functions('cancelled'), PUBLISHER_PROXY_ADDRESS: `http://127.0.0.1:${proxy.address().port}/`, PUBLISHER_PROXY_TIMEOUT: '30' });
});

after(async () => {
  await runtime?.stop();
  for (const res of held) res.destroy();
  proxy?.close();
});

/** Send a GET and leave after `ms`, as a caller that gave up. */
function leaveAfter(target, ms) {
  return new Promise((resolve) => {
    const socket = net.connect(runtime.port, '127.0.0.1', () => {
      socket.write(`GET ${target} HTTP/1.1\r\nHost: test\r\n\r\n`);
      setTimeout(() => { socket.destroy(); resolve(performance.now()); }, ms);
    });
  });
}

test('a client that leaves aborts req.signal at once, and sdk.cancelled() says so', async () => {
  const left = await leaveAfter('/wait?id=left-1', 200);
  const record = await runtime.waitFor((r) => r.records().find((x) => x.message.startsWith('signal left-1 aborted')), 'the abort');
  assert.equal(record.message, 'signal left-1 aborted; cancelled() true');
  assert.ok(performance.now() - left < 500, 'noticed within half a second');
});

test("the sdk's publish in flight stops when the call's client leaves", async () => {
  await leaveAfter('/publish?id=pub-1', 300);
  const record = await runtime.waitFor((r) => r.records().find((x) => x.message.startsWith('publish pub-1:')), 'the stopped publish');
  assert.equal(record.message, 'publish pub-1: the CloudEvent was not published: the call was cancelled (its client left)');
});

test('cancelled calls are counted by cause', async () => {
  const text = await (await runtime.fetch('/metrics')).text();
  assert.match(text, /^function_cancelled_total\{cause="client"\} 2$/m);
  assert.match(text, /^function_cancelled_total\{cause="timeout"\} 0$/m);
});
