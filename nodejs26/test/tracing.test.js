// Tracing against an OTLP/HTTP endpoint of our own: the caller's trace (W3C or B3)
// is continued, sdk spans are children of the call's span, outgoing fetch() carries
// the context, and spans leave as OTLP protobuf to TRACE_COLLECTOR_ENDPOINT.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, test } from 'node:test';
import { functions, startRuntime } from './helpers.js';

let collector;
let echo;
let runtime;
const exports = [];
const echoed = [];

function listen(server) {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server.address().port)));
}

before(async () => {
  collector = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => { exports.push({ path: req.url, type: req.headers['content-type'], length: req.headers['content-length'], body: Buffer.concat(chunks) }); res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end(); });
  });
  echo = http.createServer((req, res) => { echoed.push(req.headers); res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ traceparent: req.headers.traceparent ?? null })); });
  const collectorPort = await listen(collector);
  await listen(echo);
  runtime = await startRuntime({ HANDLER_FOLDER: functions('traced'), TRACE_COLLECTOR_ENDPOINT: `http://127.0.0.1:${collectorPort}/v1/traces`, FUNC_NAME: 'traced-fn' });
});

after(async () => {
  await runtime?.stop();
  collector?.close();
  echo?.close();
});

const target = () => `/?echo=${encodeURIComponent(`http://127.0.0.1:${echo.address().port}/`)}`;

test('the start-up line names the endpoint', () => {
  assert.match(runtime.stdout, /^Tracing configured with endpoint http:\/\/127\.0\.0\.1:\d+\/v1\/traces$/m);
});

test('W3C: the incoming trace continues into sdk spans and outgoing fetch; spans are exported as OTLP protobuf', async () => {
  const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
  const parent = '00f067aa0ba902b7';
  const body = await (await runtime.fetch(target(), { headers: { traceparent: `00-${traceId}-${parent}-01` } })).json();
  assert.equal(body.inner.traceId, traceId);
  assert.notEqual(body.inner.spanId, parent);
  const [, sentTrace, sentParent] = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(body.echoed.traceparent);
  assert.equal(sentTrace, traceId);
  assert.notEqual(sentParent, body.inner.spanId, 'the fetch has a client span of its own, a child of the inner span');
  const exported = await runtime.waitFor(() => {
    const all = Buffer.concat(exports.map((e) => e.body));
    return all.includes(Buffer.from(traceId, 'hex')) && all.includes(Buffer.from('inner-work')) && all.includes(Buffer.from('GET /')) ? exports : null;
  }, 'the exported spans', 8000);
  assert.equal(exported[0].path, '/v1/traces');
  assert.equal(exported[0].type, 'application/x-protobuf');
  assert.equal(Number(exported[0].length), exported[0].body.length, 'sent with a Content-Length, not chunked');
  const all = Buffer.concat(exported.map((e) => e.body));
  assert.ok(all.includes(Buffer.from(parent, 'hex')), "the server span's parent is the caller's span");
  assert.ok(all.includes(Buffer.from('traced-fn')), 'service.name is FUNC_NAME');
});

test('a call with a body: its sdk spans are still children of the call (the body is read outside the span context)', async () => {
  const traceId = '5bf92f3577b34da6a3ce929d0e0e4737';
  const body = await (await runtime.fetch(target(), { method: 'POST', body: '{"a":1}', headers: { 'content-type': 'application/json', traceparent: `00-${traceId}-00f067aa0ba902b7-01` } })).json();
  assert.equal(body.inner.traceId, traceId);
});

test('B3 multi-header: the incoming trace continues', async () => {
  const traceId = 'a3ce929d0e0e47364bf92f3577b34da6';
  const body = await (await runtime.fetch(target(), { headers: { 'x-b3-traceid': traceId, 'x-b3-spanid': 'a2fb4a1d1a96d312', 'x-b3-sampled': '1' } })).json();
  assert.equal(body.inner.traceId, traceId);
  assert.equal(echoed.at(-1)['x-b3-traceid'], traceId, 'B3 headers are written to outgoing calls too');
});

test('without a caller trace, a new trace; every export reaches the collector', async () => {
  const response = await runtime.fetch(target(), { headers: { 'x-request-id': 'traced-call' } });
  const body = await response.json();
  assert.match(body.inner.traceId, /^[0-9a-f]{32}$/);
  await runtime.waitFor(() => exports.some((e) => e.body.includes(Buffer.from(body.inner.traceId, 'hex'))), 'a later export', 8000);
});
