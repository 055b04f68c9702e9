// Functions written for Kyma's Node runtimes run unchanged: nodejs26's Express-style
// main(req, res) (CommonJS, require('sdk')) and nodejs20-24's main(event, context).
// One test per row of docs/migration-kyma-nodejs.md.
import assert from 'node:assert/strict';
import http from 'node:http';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { functions, startRuntime } from './helpers.js';

const received = [];
let publisher;
const started = [];

before(async () => {
  publisher = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => { body += chunk; });
    req.on('end', () => { received.push({ headers: req.headers, body }); res.writeHead(200).end(); });
  });
  await new Promise((resolve) => publisher.listen(0, '127.0.0.1', resolve));
});

after(async () => {
  await Promise.all(started.map((runtime) => runtime.stop()));
  publisher.close();
});

async function start(env) {
  const runtime = await startRuntime({ PUBLISHER_PROXY_ADDRESS: `http://127.0.0.1:${publisher.address().port}/`, ...env });
  started.push(runtime);
  return runtime;
}

async function call(runtime, target, init) {
  const response = await runtime.fetch(target, init);
  return { status: response.status, headers: response.headers, text: await response.text() };
}

describe("Kyma nodejs26: main(req, res) on Express-style objects", () => {
  let runtime;
  before(async () => {
    // As Kyma's nodejs26 is configured: the file in HANDLER_PATH, SERVICE_NAMESPACE, FUNC_BODY_MB_LIMIT, FUNC_TIMEOUT.
    runtime = await start({ HANDLER_PATH: path.join(functions('kyma26'), 'handler.js'), FUNC_NAME: 'orders', SERVICE_NAMESPACE: 'shop', FUNC_BODY_MB_LIMIT: '1', FUNC_TIMEOUT: '30' });
  });
  test('res.send() with req.body parsed from JSON', async () => {
    const { text, headers } = await call(runtime, '/send', { method: 'POST', body: '{"name":"Ada"}', headers: { 'content-type': 'application/json' } });
    assert.equal(text, 'Hello Ada');
    assert.equal(headers.get('content-type'), 'text/plain; charset=utf-8');
  });
  test('res.status(code).send(body)', async () => {
    const { status, text } = await call(runtime, '/status-send');
    assert.equal(status, 400);
    assert.equal(text, 'Missing id parameter');
  });
  test('res.json() and req.query (a repeated name is an array)', async () => {
    const { text } = await call(runtime, '/json?id=7&tag=a&tag=b');
    assert.deepEqual(JSON.parse(text), { id: '7', all: ['a', 'b'] });
  });
  test('res.set(name, value), res.set(object), res.setHeader(), res.header()', async () => {
    const { headers } = await call(runtime, '/set');
    assert.deepEqual(['x-one', 'x-two', 'x-three', 'x-four'].map((name) => headers.get(name)), ['1', '2', '3', '4']);
  });
  test('res.type() shorthand', async () => {
    assert.equal((await call(runtime, '/type')).headers.get('content-type'), 'application/json');
  });
  test('res.status().end()', async () => {
    const { status, text } = await call(runtime, '/end');
    assert.equal(status, 202);
    assert.equal(text, '');
  });
  test('res.sendStatus()', async () => {
    const { status, text } = await call(runtime, '/sendStatus');
    assert.equal(status, 418);
    assert.equal(text, "I'm a Teapot");
  });
  test('req.get(), req.headers, req.hostname, req.is()', async () => {
    const { text } = await call(runtime, '/get', { method: 'POST', body: '{}', headers: { 'x-custom': 'c', 'content-type': 'application/json; charset=utf-8' } });
    assert.deepEqual(JSON.parse(text), { viaGet: 'c', viaHeaders: 'c', host: '127.0.0.1', is: 'json' });
  });
  test("req.params from Kyma's catch-all route '*path': the pathname's segments, decoded", async () => {
    // What Express 5.3 (router 2.3, path-to-regexp 8.4) gives through app.all('*path'), run beside Kyma's server.mjs.
    assert.deepEqual(JSON.parse((await call(runtime, '/params')).text), { path: ['', 'params'] });
    assert.deepEqual(JSON.parse((await call(runtime, '/route/a%20b/c%2Fd/')).text), { method: 'GET', params: { path: ['', 'route', 'a b', 'c/d', ''] }, path: '/route/a%20b/c%2Fd/' });
    assert.deepEqual(JSON.parse((await call(runtime, '/route//x')).text), { method: 'GET', params: { path: ['', 'route', '', 'x'] }, path: '/route//x' });
  });
  test("every method and every path but Kyma's GET routes reach the function", async () => {
    // Kyma registers GET /healthz, /metrics and /favicon.ico before app.all('*path').
    for (const [method, target] of [['POST', '/healthz'], ['DELETE', '/favicon.ico'], ['GET', '/healthz/x'], ['PATCH', '/']]) {
      const { status, text } = await call(runtime, target, { method });
      assert.equal(status, 404, `${method} ${target}`);
      assert.deepEqual(JSON.parse(text), { method, params: { path: target.split('/') }, path: target });
    }
  });
  test("req.path as sent, req.query as Express 5's parser gives it, req.get() with Express's checks", async () => {
    const { text } = await call(runtime, '/route?x=1&x=2&y&c=1+2&d=%ZZ&a[b]=1', { headers: { 'x-custom': 'c', referer: 'r' } });
    assert.deepEqual(JSON.parse(text), {
      params: { path: ['', 'route'] }, path: '/route', query: { x: ['1', '2'], y: '', c: '1 2', d: '%ZZ', 'a[b]': '1' },
      get: ['c', 'r', null], noName: 'TypeError: name argument is required to req.get',
    });
  });
  test('a path segment that does not decode is a 400 with no detail, as Express answers', async () => {
    const { status, text } = await call(runtime, '/route/%ZZ');
    assert.equal(status, 400);
    assert.equal(text, 'Bad Request: The request path is not valid percent-encoding.');
  });
  test('req.body is a string for text/*', async () => {
    assert.equal((await call(runtime, '/text-body', { method: 'POST', body: 'hi', headers: { 'content-type': 'text/plain' } })).text, 'string:hi');
  });
  test("the sdk's metadata from Kyma's variable names", async () => {
    assert.deepEqual(JSON.parse((await call(runtime, '/metadata')).text), { name: 'orders', namespace: 'shop', runtime: 'nodejs26', timeout: 30, limit: 1, tracer: 'function' });
  });
  test('getCloudEvent(req)', async () => {
    const ce = { 'ce-specversion': '1.0', 'ce-type': 'order.created', 'ce-source': '/shop', 'ce-id': '1', 'content-type': 'application/json' };
    assert.equal((await call(runtime, '/cloudevent', { method: 'POST', body: '{"a":1}', headers: ce })).text, 'order.created//shop/{"a":1}');
    assert.equal((await call(runtime, '/cloudevent', { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } })).text, 'not a cloud event');
  });
  test('an async function answering through res', async () => {
    assert.deepEqual(JSON.parse((await call(runtime, '/async')).text), { later: true });
  });
  test('a rejected promise is a 500 at once, not a hang until 408 (Kyma)', async () => {
    const { status, text } = await call(runtime, '/reject');
    assert.equal(status, 500);
    assert.equal(text, 'Internal Server Error');
  });
  test("a synchronous throw is a plain 500, not Express's HTML page with the stack (Kyma)", async () => {
    const { status, text, headers } = await call(runtime, '/throw');
    assert.equal(status, 500);
    assert.equal(text, 'Internal Server Error');
    assert.equal(headers.get('content-type'), 'text/plain; charset=utf-8');
  });
  test('emitCloudEvent() resolves once the publisher took the event', async () => {
    const before = received.length;
    assert.equal((await call(runtime, '/emit', { method: 'POST' })).text, 'event emitted');
    assert.equal(JSON.parse(received[before].body).type, 'kyma.order');
  });
  test('FUNC_BODY_MB_LIMIT in megabytes: 413 above it', async () => {
    const { status } = await call(runtime, '/send', { method: 'POST', body: 'x'.repeat(1024 * 1024 + 1), headers: { 'content-type': 'text/plain' } });
    assert.equal(status, 413);
  });
});

describe('Kyma nodejs20-24: main(event, context)', () => {
  let runtime;
  before(async () => {
    runtime = await start({ HANDLER_PATH: `${functions('kyma-legacy')}/function/handler.js`, FUNC_NAME: 'legacy', SERVICE_NAMESPACE: 'ns', FUNC_RUNTIME: 'nodejs22', REQ_MB_LIMIT: '2', FUNC_TIMEOUT: '20', FUNC_MEMORY_LIMIT: '128Mi' });
  });
  test('event.data is the parsed body; a returned string is the answer', async () => {
    assert.equal((await call(runtime, '/data', { method: 'POST', body: '{"name":"Ada"}', headers: { 'content-type': 'application/json' } })).text, 'Hello, Ada');
  });
  test('a returned object is JSON', async () => {
    const { text, headers } = await call(runtime, '/object', { method: 'POST', body: 'a=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    assert.equal(headers.get('content-type'), 'application/json');
    assert.deepEqual(JSON.parse(text), { got: { a: '1' } });
  });
  test("context holds Kyma's keys", async () => {
    assert.deepEqual(JSON.parse((await call(runtime, '/context')).text), { 'function-name': 'legacy', namespace: 'ns', timeout: 20, runtime: 'nodejs22', 'memory-limit': '128Mi', 'body-size-limit': 2, tracer: 'function' });
  });
  test('ce-* keys and the event data of a binary CloudEvent', async () => {
    const headers = { 'ce-specversion': '1.0', 'ce-type': 'order', 'ce-source': '/s', 'ce-id': 'e-1', 'ce-eventtypeversion': 'v1', 'content-type': 'application/json' };
    assert.deepEqual(JSON.parse((await call(runtime, '/ce', { method: 'POST', body: '{"n":1}', headers })).text), { type: 'order', source: '/s', id: 'e-1', specversion: '1.0', eventtypeversion: 'v1', data: { n: 1 } });
  });
  test('ce-* keys of a structured CloudEvent', async () => {
    const envelope = { specversion: '1.0', type: 'order.s', source: '/s', id: 'e-2', data: { n: 2 } };
    const body = JSON.parse((await call(runtime, '/ce', { method: 'POST', body: JSON.stringify(envelope), headers: { 'content-type': 'application/cloudevents+json' } })).text);
    assert.deepEqual([body.type, body.id, body.data], ['order.s', 'e-2', { n: 2 }]);
  });
  test('setResponseStatus, setResponseHeader, setResponseContentType', async () => {
    const { status, headers, text } = await call(runtime, '/helpers');
    assert.equal(status, 201);
    assert.equal(headers.get('x-helper'), 'yes');
    assert.equal(headers.get('content-type'), 'text/csv');
    assert.equal(text, 'a,b');
  });
  test('event.extensions.response answers by hand', async () => {
    const { status, text } = await call(runtime, '/response');
    assert.equal(status, 203);
    assert.equal(text, 'by hand');
  });
  test('event.emitCloudEvent()', async () => {
    const before = received.length;
    assert.equal((await call(runtime, '/emit', { method: 'POST' })).text, 'emitted');
    const event = JSON.parse(received[before].body);
    assert.deepEqual([event.type, event.source, event.subject, event.data], ['legacy.order', '/legacy', 'legacy', { n: 1 }]);
  });
  test('event.buildResponseCloudEvent() (deprecated) still builds the dict', async () => {
    const built = JSON.parse((await call(runtime, '/build', { headers: { 'ce-source': '/in', 'ce-specversion': '1.0', 'ce-type': 'x', 'ce-id': 'i' } })).text);
    assert.deepEqual(built, { type: 'legacy.reply', source: '/in', specversion: '1.0', id: 'id-1', data: { ok: true }, datacontenttype: 'application/json' });
  });
  test("a throw is a plain 500 (Kyma answered 'Internal server error' or the thrown string)", async () => {
    const { status, text } = await call(runtime, '/throw');
    assert.equal(status, 500);
    assert.equal(text, 'Internal Server Error');
  });
  test('returning nothing is 200 with an empty body', async () => {
    const { status, text } = await call(runtime, '/nothing');
    assert.equal(status, 200);
    assert.equal(text, '');
  });
  test('event.data is a Buffer for other content types', async () => {
    const { headers, text } = await call(runtime, '/buffer', { method: 'POST', body: 'raw', headers: { 'content-type': 'application/x-thing' } });
    assert.equal(headers.get('content-type'), 'application/octet-stream');
    assert.equal(text, 'raw');
  });
  test('REQ_MB_LIMIT (nodejs20-24) in megabytes', async () => {
    assert.equal((await call(runtime, '/data', { method: 'POST', body: 'x'.repeat(2 * 1024 * 1024 + 1), headers: { 'content-type': 'text/plain' } })).status, 413);
  });
});

describe('Kyma nodejs20-24: the other shapes', () => {
  test('sendResponse(body, status, headers), the third argument', async () => {
    const runtime = await start({ HANDLER_FOLDER: functions('kyma-legacy-callback') });
    const { status, headers, text } = await call(runtime, '/');
    assert.equal(status, 207);
    assert.equal(headers.get('x-callback'), 'yes');
    assert.deepEqual(JSON.parse(text), { callback: true });
  });
  test('main(event) alone is the legacy contract too', async () => {
    const runtime = await start({ HANDLER_FOLDER: functions('kyma-legacy-event-only') });
    const headers = { 'ce-specversion': '1.0', 'ce-type': 'only', 'ce-source': '/s', 'ce-id': '1', 'content-type': 'application/json' };
    assert.equal((await call(runtime, '/', { method: 'POST', body: '[1]', headers })).text, 'type=only data=[1]');
  });
});
