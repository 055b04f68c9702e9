// The real runtime (bin/serve) on an ephemeral port, started once for this file:
// return coercion, res's two vocabularies, errors, streams, probes, metrics,
// CloudEvents in and out, request ids and logs, as a client and the log see them.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { functions, rawRequest, startRuntime } from './helpers.js';

let runtime;
let publisher;
const received = [];

before(async () => {
  publisher = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => { body += chunk; });
    req.on('end', () => { received.push({ headers: req.headers, body }); res.writeHead(202).end(); });
  });
  await new Promise((resolve) => publisher.listen(0, '127.0.0.1', resolve));
  runtime = await startRuntime({
    HANDLER_FOLDER: functions('paths'),
    SERVER_CALL_TIMEOUT: '1',
    SERVER_MAX_BODY_SIZE: '1000',
    FUNC_NAME: 'paths',
    PUBLISHER_PROXY_ADDRESS: `http://127.0.0.1:${publisher.address().port}/publish`,
  });
});

after(async () => {
  await runtime?.stop();
  publisher?.close();
});

async function get(path, init) {
  const response = await runtime.fetch(path, init);
  return { response, status: response.status, type: response.headers.get('content-type'), text: await response.text(), headers: response.headers };
}

describe('return values are coerced as in funcwsgi', () => {
  test('a string is text/plain; charset=utf-8', async () => {
    const { status, type, text } = await get('/hello');
    assert.equal(status, 200);
    assert.equal(type, 'text/plain; charset=utf-8');
    assert.equal(text, 'hello');
  });
  test('an object is JSON', async () => {
    const { type, text } = await get('/json');
    assert.equal(type, 'application/json');
    assert.deepEqual(JSON.parse(text), { a: 1, list: [1, 'two'], text: 'ü' });
  });
  test('an array is JSON, not a (body, status) tuple', async () => {
    const { status, text } = await get('/array');
    assert.equal(status, 200);
    assert.equal(text, '[1,2]');
  });
  test('a Buffer is application/octet-stream', async () => {
    const { response } = await get('/bytes');
    assert.equal(response.headers.get('content-type'), 'application/octet-stream');
    assert.equal(response.headers.get('content-length'), '3');
  });
  test('a WHATWG Response passes through', async () => {
    const { status, type, text, headers } = await get('/response');
    assert.equal(status, 202);
    assert.equal(type, 'text/x-web');
    assert.equal(headers.get('x-web'), 'yes');
    assert.equal(text, 'from fetch api');
  });
  test('an async iterable streams', async () => {
    const { text, headers } = await get('/stream');
    assert.equal(text, 'abc');
    assert.equal(headers.get('transfer-encoding'), 'chunked');
  });
  test('something that cannot be a body is a 500', async () => {
    const { status, text } = await get('/bad-return');
    assert.equal(status, 500);
    assert.equal(text, 'Internal Server Error');
  });
});

describe("res: the rework's names", () => {
  test('setCode and the body returned', async () => {
    const { status, text } = await get('/status?code=418');
    assert.equal(status, 418);
    assert.equal(text, 'status 418');
  });
  test('set_code, set_header, setBody chain; undefined returned sends res', async () => {
    const { status, type, text, headers } = await get('/set-code');
    assert.equal(status, 201);
    assert.equal(headers.get('x-a'), '1');
    assert.equal(type, 'application/json');
    assert.deepEqual(JSON.parse(text), { made: true });
  });
  test('setText with a content type, setData', async () => {
    assert.equal((await get('/text')).type, 'text/csv');
    const data = await get('/data');
    assert.equal(data.type, 'application/octet-stream');
    assert.equal(data.text, 'xyz');
  });
});

describe("res: Express's senders (Kyma nodejs26 functions)", () => {
  test('status().send()', async () => {
    const { status, text } = await get('/express/send');
    assert.equal(status, 201);
    assert.equal(text, 'sent');
  });
  test('json()', async () => {
    const { type, text } = await get('/express/json');
    assert.equal(type, 'application/json');
    assert.equal(text, '{"j":1}');
  });
  test('sendStatus()', async () => {
    const { status, text } = await get('/express/sendStatus');
    assert.equal(status, 404);
    assert.equal(text, 'Not Found');
  });
  test('send() from a callback after the function returned', async () => {
    const { status, text, headers } = await get('/express/later');
    assert.equal(status, 202);
    assert.equal(headers.get('x-later'), 'yes');
    assert.equal(text, 'later');
  });
  test('a second send() is ignored, and said so in the log', async () => {
    assert.equal((await get('/express/twice')).text, 'first');
    await runtime.waitFor((r) => r.records().find((x) => x.message === 'res.send() on GET /express/twice after the call was answered (by the return value or an earlier answer); ignored'), 'the warning');
  });
  test('setHeader() and end()', async () => {
    const { type, text } = await get('/express/end');
    assert.equal(type, 'text/html');
    assert.equal(text, '<b>end</b>');
  });
  test('write() chunks, end() later', async () => {
    assert.equal((await get('/express/write')).text, 'one,two');
  });
  test('redirect()', async () => {
    const { status, headers } = await get('/express/redirect', { redirect: 'manual' });
    assert.equal(status, 302);
    assert.equal(headers.get('location'), '/hello');
  });
});

describe('the request', () => {
  test('method, path and the query in order', async () => {
    const { text } = await get('/request?b=2&a=1&b=3', { method: 'PUT' });
    assert.deepEqual(JSON.parse(text), { method: 'PUT', path: '/request', query: { b: ['2', '3'], a: ['1'] } });
  });
  test('the body echoed with its content type', async () => {
    const { text, type } = await get('/echo', { method: 'POST', body: 'raw\u00e9', headers: { 'content-type': 'text/x-custom' } });
    assert.equal(type, 'text/x-custom');
    assert.equal(text, 'raw\u00e9');
  });
  for (const [name, contentType, body, expected] of [
    ['JSON', 'application/json', '{"x":[1]}', { body: { x: [1] }, type: 'object' }],
    ['text', 'text/plain', 'words', { body: 'words', type: 'string' }],
    ['a form', 'application/x-www-form-urlencoded', 'a=1&b=2&b=3', { body: { a: '1', b: ['2', '3'] }, type: 'object' }],
    ['bytes', 'application/octet-stream', 'xyz', { body: 'buffer:3', type: 'object' }],
  ]) {
    test(`req.body is parsed by content type: ${name}`, async () => {
      const { text } = await get('/body', { method: 'POST', body, headers: { 'content-type': contentType } });
      assert.deepEqual(JSON.parse(text), expected);
    });
  }
  test('no body: req.body is undefined', async () => {
    assert.deepEqual(JSON.parse((await get('/body')).text), { body: null, type: 'undefined' });
  });
  test('a JSON body that is not JSON is a 400, not a 500', async () => {
    const { status, text } = await get('/body', { method: 'POST', body: '{nope', headers: { 'content-type': 'application/json' } });
    assert.equal(status, 400);
    assert.equal(text, 'Bad Request: The request body is not valid JSON.');
  });
  test('sdk.getRequest() is the call request', async () => {
    assert.deepEqual(JSON.parse((await get('/sdk-request')).text), { same: true, tracer: 'function' });
  });
  test("a function listening for the end of a body-less request's stream hears it, as on node:http", async () => {
    assert.equal((await get('/raw/listens')).text, 'listening');
    let heard = [];
    for (let tries = 0; tries < 50 && heard.length < 2; tries += 1) heard = JSON.parse((await get('/raw/heard')).text);
    assert.deepEqual(heard, ['end', 'close']);
  });
});

/** The status lines a raw exchange got, in order. */
const statuses = (raw) => [...raw.matchAll(/HTTP\/1\.[01] (\d{3}) /g)].map((match) => Number(match[1]));

describe('framing the runtime checks beside node:http', () => {
  test('an HTTP/1.0 POST without keep-alive is answered by its function, then the connection closes: no 400 for what follows', async () => {
    const raw = await rawRequest(runtime.port, 'POST /echo HTTP/1.0\r\nContent-Length: 3\r\n\r\nabcGET /echo HTTP/1.1\r\nHost: x\r\n\r\n');
    assert.deepEqual(statuses(raw), [200]);
    assert.ok(raw.endsWith('abc'), raw);
  });
  test('a valid request followed by garbage: its own answer first, then 400 and the close', async () => {
    const raw = await rawRequest(runtime.port, 'POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc\x00garbage\r\n\r\n');
    assert.deepEqual(statuses(raw), [200, 400]);
    assert.ok(raw.includes('\r\n\r\nabcHTTP/1.1 400 '), raw);
  });
  test('a Host sent as a trailer is refused, the function not run (RFC 9110 section 6.5.1)', async () => {
    const raw = await rawRequest(runtime.port, 'POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nHost: y\r\n\r\n');
    assert.deepEqual(statuses(raw), [400]);
    assert.ok(!raw.includes('abc'), raw);
  });
  test('a Host that is a list is refused (RFC 9112 section 3.2)', async () => {
    const raw = await rawRequest(runtime.port, 'GET /echo HTTP/1.1\r\nHost: x, y\r\n\r\n');
    assert.deepEqual(statuses(raw), [400]);
  });
});

describe('failures', () => {
  for (const path of ['/raise', '/reject', '/throw-string']) {
    test(`${path}: 500 Internal Server Error at once, the stack only in the log`, async () => {
      const { status, text, type, headers } = await get(path);
      assert.equal(status, 500);
      assert.equal(type, 'text/plain; charset=utf-8');
      assert.equal(text, 'Internal Server Error');
      assert.ok(headers.get('x-request-id'));
      const id = headers.get('x-request-id');
      const record = await runtime.waitFor((r) => r.records().find((x) => x.request_id === id && x.logger === 'funcwsgi.errors'), 'the error record');
      assert.equal(record.level, 'ERROR');
      assert.equal(record.message, `Function failed on GET ${path}`);
      if (path !== '/throw-string') assert.match(record.exc_info, /node-secret/);
    });
  }
  for (const path of ['/express/throw-later', '/express/reject-later']) {
    test(`${path}: a throw in a callback the function left behind is its call's 500, at once; the server keeps serving`, async () => {
      const started = performance.now();
      const { status, text } = await get(path);
      assert.ok(performance.now() - started < 900);
      assert.deepEqual([status, text], [500, 'Internal Server Error']);
      assert.equal((await get('/hello')).text, 'hello');
    });
  }
  test('a failure after streaming began closes the connection; the server keeps serving', async () => {
    await assert.rejects(async () => { const response = await runtime.fetch('/stream-fail'); await response.text(); });
    assert.equal((await get('/hello')).text, 'hello');
    await runtime.waitFor((r) => r.records().find((x) => x.message === 'Function failed while streaming GET /stream-fail; closing the connection'), 'the streaming failure record');
  });
  test('an awaited call past SERVER_CALL_TIMEOUT is answered 408 on time', async () => {
    const started = performance.now();
    const { status, text } = await get('/sleep?seconds=3');
    assert.ok(performance.now() - started < 2500);
    assert.equal(status, 408);
    assert.equal(text, 'Timeout while processing the function');
    await runtime.waitFor((r) => r.records().find((x) => x.message === 'Call timed out after 1s (the function did not return): GET /sleep'), 'the timeout record');
  });
  test('req.signal is aborted at the timeout, so the function can stop its work', async () => {
    assert.equal((await get('/aborted')).status, 408);
    await runtime.waitFor((r) => r.records().find((x) => x.message === 'aborted at the timeout'), 'the function noticing');
  });
  test('a call that blocks the event loop past its deadline: 408, logged, the next liveness probe fails once', async () => {
    const { status } = await get('/spin?seconds=2.2');
    assert.equal(status, 408);
    await runtime.waitFor((r) => r.records().find((x) => /^The event loop has been blocked for \d+\.\ds, longer than SERVER_CALL_TIMEOUT=1s/.test(x.message)), 'the watcher thread record');
    const probe = await get('/health/liveness');
    assert.equal(probe.status, 503);
    assert.match(probe.text, /^the event loop was blocked for \d+\.\ds by GET \/spin, longer than SERVER_CALL_TIMEOUT=1s$/);
    assert.equal((await get('/health/liveness')).status, 200);
  });
  test('413 over SERVER_MAX_BODY_SIZE, declared or chunked', async () => {
    const declared = await get('/size', { method: 'POST', body: 'x'.repeat(1001) });
    assert.equal(declared.status, 413);
    assert.equal(declared.text, 'Request Entity Too Large: the request body is larger than 1000 bytes');
    const chunked = await rawRequest(runtime.port, `POST /size HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3e9\r\n${'y'.repeat(1001)}\r\n0\r\n\r\n`);
    assert.match(chunked, /^HTTP\/1.1 413 Request Entity Too Large/);
    assert.equal((await get('/size', { method: 'POST', body: 'x'.repeat(1000) })).text, '1000');
  });
});

describe('reserved routes', () => {
  test('/healthz, /favicon.ico', async () => {
    assert.equal((await get('/healthz')).text, 'OK');
    const favicon = await get('/favicon.ico');
    assert.equal(favicon.status, 204);
  });
  test('readiness follows the ready() hook, liveness the alive() hook', async () => {
    assert.equal((await get('/health/readiness')).status, 200);
    await get('/ready?value=false');
    const notReady = await get('/health/readiness');
    assert.equal(notReady.status, 503);
    assert.equal(notReady.text, 'not ready yet');
    await get('/ready?value=true');
    await get('/alive?value=false');
    const dead = await get('/health/liveness');
    assert.equal(dead.status, 503);
    assert.equal(dead.text, 'alive() returned False');
    assert.equal((await get('/healthz')).status, 503, '/healthz answers like liveness when there are checks');
    await get('/alive?value=true');
    assert.equal((await get('/health/liveness')).status, 200);
  });
  test('a probe runs in its own call: a pipelined one behind a call too (its hook sees its request and id)', async () => {
    await get('/ready?value=log');
    try {
      const both = 'GET /hello HTTP/1.1\r\nHost: x\r\nX-Request-Id: pipelined-call\r\n\r\n'
        + 'GET /health/readiness HTTP/1.1\r\nHost: x\r\nX-Request-Id: pipelined-probe\r\n\r\n';
      const raw = await rawRequest(runtime.port, both);
      assert.match(raw, /^HTTP\/1.1 200 OK[\s\S]*\r\n\r\nhelloHTTP\/1.1 200 OK[\s\S]*\r\n\r\nOK$/);
      const asked = await runtime.waitFor((r) => r.records().find((x) => x.message.startsWith('readiness asked')), "the hook's record");
      assert.deepEqual([asked.message, asked.request_id], ['readiness asked on /health/readiness', 'pipelined-probe']);
    } finally {
      await get('/ready?value=true');
    }
  });
  test('HEAD on a probe: the length, no body', async () => {
    const raw = await rawRequest(runtime.port, 'HEAD /health/readiness HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    assert.match(raw, /Content-Length: 2\r\n/);
    assert.ok(raw.endsWith('\r\n\r\n'));
  });
  test('/metrics: the three series of funcwsgi, labelled method, with its buckets', async () => {
    await get('/hello', { method: 'POST' });
    await get('/raise', { method: 'POST' });
    const { text, type } = await get('/metrics');
    assert.match(type, /^text\/plain; version=0.0.4/);
    assert.match(text, /^# TYPE function_calls_total counter$/m);
    assert.match(text, /^# TYPE function_failures_total counter$/m);
    assert.match(text, /^# TYPE function_duration_seconds histogram$/m);
    const count = (name, method) => Number(new RegExp(`^${name}\\{method="${method}"\\} (\\d+)$`, 'm').exec(text)?.[1]);
    assert.ok(count('function_calls_total', 'POST') >= 2);
    assert.ok(count('function_failures_total', 'POST') >= 1);
    assert.equal(count('function_calls_total', 'other'), 0);
    const buckets = [...text.matchAll(/^function_duration_seconds_bucket\{le="([^"]+)",method="GET"\}/gm)].map((m) => (m[1] === '+Inf' ? Infinity : Number(m[1])));
    assert.deepEqual(buckets, [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 180, Infinity]);
  });
});

describe('CloudEvents', () => {
  test('binary mode in', async () => {
    const { text } = await get('/cloudevent/echo', { method: 'POST', body: '{"order":1}', headers: { 'ce-specversion': '1.0', 'ce-type': 't.created', 'ce-source': '/tests', 'ce-id': 'c-1', 'ce-conformanceext': 'ext', 'content-type': 'application/json' } });
    assert.deepEqual(JSON.parse(text), { cloudevent: { type: 't.created', source: '/tests', id: 'c-1', specversion: '1.0', conformanceext: 'ext' }, data: { order: 1 }, same: true });
  });
  test('structured mode in', async () => {
    const envelope = { specversion: '1.0', type: 't.structured', source: '/s', id: 's-1', datacontenttype: 'application/json', data: { n: 2 } };
    const { text } = await get('/cloudevent/echo', { method: 'POST', body: JSON.stringify(envelope), headers: { 'content-type': 'application/cloudevents+json' } });
    const body = JSON.parse(text);
    assert.equal(body.cloudevent.id, 's-1');
    assert.deepEqual(body.data, { n: 2 });
  });
  test('a plain call has no event', async () => {
    assert.deepEqual(JSON.parse((await get('/cloudevent/echo', { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } })).text), { cloudevent: null });
  });
  for (const [name, headers, reason] of [
    ['binary without id', { 'ce-specversion': '1.0', 'ce-type': 't', 'ce-source': '/s' }, 'Bad Request: missing required CloudEvent header(s): ce-id'],
    ['structured, not JSON', { 'content-type': 'application/cloudevents+json' }, 'Bad Request: the structured CloudEvent is not valid JSON'],
  ]) {
    test(`malformed (${name}) is a 400`, async () => {
      const { status, text } = await get('/cloudevent/echo', { method: 'POST', body: '{not json', headers });
      assert.equal(status, 400);
      assert.equal(text, reason);
    });
  }
  test('a returned CloudEvent is a binary-mode reply', async () => {
    const { status, headers, text } = await get('/cloudevent/reply', { method: 'POST' });
    assert.equal(status, 200);
    assert.equal(headers.get('ce-type'), 'node.reply');
    assert.equal(headers.get('ce-source'), '/node');
    assert.equal(headers.get('ce-specversion'), '1.0');
    assert.ok(headers.get('ce-id'));
    assert.equal(headers.get('content-type').split(';')[0], 'application/json');
    assert.deepEqual(JSON.parse(text), { ok: true });
  });
  test('emitCloudEvent posts a structured event to the publisher proxy, with the trace headers of the call', async () => {
    const before = received.length;
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const { status } = await get('/cloudevent/emit?n=5', { method: 'POST', headers: { traceparent } });
    assert.equal(status, 204);
    assert.equal(received.length, before + 1);
    const { headers, body } = received.at(-1);
    assert.match(headers['content-type'], /^application\/cloudevents\+json/);
    assert.equal(headers.traceparent, traceparent);
    const event = JSON.parse(body);
    assert.equal(event.type, 'node.emitted');
    assert.equal(event.source, '/node');
    assert.equal(event.subject, 'sub');
    assert.deepEqual(event.data, { n: 5 });
  });
});

describe('request ids and logs', () => {
  test("the caller's X-Request-Id is echoed and on the call's log records, console.log's included", async () => {
    const { headers } = await get('/log?id=abc', { headers: { 'x-request-id': 'caller-id-1' } });
    assert.equal(headers.get('x-request-id'), 'caller-id-1');
    const line = await runtime.waitFor((r) => r.records().find((x) => x.message === 'node log line abc'), 'the sdk logger record');
    assert.deepEqual([line.level, line.logger, line.function, line.request_id], ['INFO', 'function', 'paths', 'caller-id-1']);
    const consoleLine = await runtime.waitFor((r) => r.records().find((x) => x.message === 'console line abc'), 'the console record');
    assert.equal(consoleLine.request_id, 'caller-id-1');
  });
  test('an unusable X-Request-Id is replaced by 32 hex digits', async () => {
    const { headers } = await get('/hello', { headers: { 'x-request-id': 'x'.repeat(129) } });
    assert.match(headers.get('x-request-id'), /^[0-9a-f]{32}$/);
  });
  test('the four start-up lines, in order, once', () => {
    const lines = runtime.stdout.split('\n').filter((line) => !line.startsWith('{')).slice(0, 4);
    assert.equal(lines[0], `Importing function sources from ${functions('paths')}/handler.mjs:main`);
    assert.equal(lines[1], 'Tracing disabled: TRACE_COLLECTOR_ENDPOINT is not set');
    assert.match(lines[2], /^Publisher Proxy available on address http:\/\/127\.0\.0\.1:\d+\/publish$/);
    assert.equal(lines[3], `Starting nodejs26 server 127.0.0.1:${runtime.port}`);
  });
});

describe('clients that go away', () => {
  test('a client that disconnects before the answer: the late answer goes nowhere, the server keeps serving', async () => {
    const controller = new AbortController();
    const pending = runtime.fetch('/sleep?seconds=0.3', { signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    await assert.rejects(pending);
    await new Promise((r) => setTimeout(r, 400));
    const streamed = new AbortController();
    const stream = await runtime.fetch('/express/write', { signal: streamed.signal });
    streamed.abort();
    await new Promise((r) => setTimeout(r, 50));
    assert.equal((await get('/hello')).text, 'hello');
    assert.equal(runtime.exited, null);
    assert.ok(stream);
  });
});
