// What HTTP cannot see, in-process: settings parsing and precedence, signature
// detection, body coercion, the request's parsers, res's checks, CloudEvent
// decoding, CORS decisions, Kyma's context, log records.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { encodeBody, UnsupportedResponse } from '../lib/coerce.js';
import { decode, MalformedCloudEvent, makeEvent, toBinary } from '../lib/cloudevents.js';
import { Admission, INTERVAL } from '../lib/admission.js';
import { fromEnv, MAX_INFLIGHT, maxInflight, SETTINGS, settingsList } from '../lib/config.js';
import { OVERLOADED, REQUEST_TIMEOUT, serverOptions, SWEEP_MS } from '../lib/connections.js';
import { Cors } from '../lib/cors.js';
import { framingProblem } from '../lib/server.js';
import { ConfigError, pyRepr } from '../lib/errors.js';
import { buildContext } from '../lib/legacy.js';
import { configureLogging, getLogger } from '../lib/logs.js';
import { FunctionRequest, HttpError, typeMatches } from '../lib/request.js';
import { FunctionResponse } from '../lib/response.js';
import { detectSignature, parameterNames, Signature } from '../lib/signatures.js';
import { startupLines } from '../lib/startup.js';
import { functions } from './helpers.js';

const base = { HANDLER_FOLDER: functions('paths') };
const config = (env) => fromEnv({ ...base, ...env });

describe('settings', () => {
  test('defaults inside the runtime', () => {
    const c = fromEnv({});
    assert.equal(c.funcRuntime, 'nodejs26');
    assert.equal(c.serverHost, '0.0.0.0');
    assert.equal(c.serverPort, 8080);
    assert.equal(c.serverCallTimeout, 180);
    assert.equal(c.serverMaxBodySize, 104857600);
    assert.equal(c.handlerFolder, '/');
    assert.equal(c.handlerModuleName, 'handler');
    assert.equal(c.handlerFunctionName, 'main');
    assert.deepEqual(c.otelPropagators, ['tracecontext', 'baggage', 'b3multi']);
    assert.ok(Object.isFrozen(c) && Object.isFrozen(c.serverCorsMethods));
  });
  test('the main name wins over its aliases; aliases in declared order', () => {
    assert.equal(config({ SERVER_PORT: '9000', FUNC_PORT: '9001', PORT: '9002' }).serverPort, 9000);
    assert.equal(config({ FUNC_PORT: '9001', PORT: '9002' }).serverPort, 9001);
    assert.equal(config({ PORT: '9002' }).serverPort, 9002);
    assert.equal(config({ SERVER_CALL_TIMEOUT: '5', FUNC_TIMEOUT: '9' }).serverCallTimeout, 5);
    assert.equal(config({ SERVICE_NAMESPACE: 'kyma' }).funcNamespace, 'kyma');
  });
  test('aliases with another unit: FUNC_BODY_MB_LIMIT and REQ_MB_LIMIT are megabytes', () => {
    assert.equal(config({ FUNC_BODY_MB_LIMIT: '1.5' }).serverMaxBodySize, 1572864);
    assert.equal(config({ REQ_MB_LIMIT: '2' }).serverMaxBodySize, 2097152);
    assert.equal(config({ SERVER_MAX_BODY_SIZE: '10', FUNC_BODY_MB_LIMIT: '1' }).serverMaxBodySize, 10);
  });
  test('an empty value is a value (as in funcwsgi): SERVER_PORT= is refused', () => {
    assert.throws(() => config({ SERVER_PORT: '' }), { message: "SERVER_PORT='' is invalid: expected an integer from 1 to 65535" });
  });
  test('parsers: booleans, lists, mappings, hosts', () => {
    assert.equal(config({ SERVER_ACCESS_LOG: 'YES' }).serverAccessLog, true);
    assert.equal(config({ SERVER_INTERNAL_LOGGER: 'true' }).serverAccessLog, true);
    assert.throws(() => config({ SERVER_METRICS: 'maybe' }), ConfigError);
    assert.deepEqual(config({ SERVER_CORS_METHODS: 'get, post,' }).serverCorsMethods, ['GET', 'POST']);
    assert.deepEqual(config({ FUNC_LABELS: 'app=shop, tier=web' }).funcLabels, { app: 'shop', tier: 'web' });
    assert.deepEqual(config({ FUNC_ANNOTATIONS: '{"a": 1, "b": "x"}' }).funcAnnotations, { a: '1', b: 'x' });
    assert.throws(() => config({ FUNC_LABELS: 'novalue' }), { message: "FUNC_LABELS='novalue' is invalid: expected a JSON object or k=v,k2=v2" });
    assert.equal(config({ SERVER_HOST: '0:0::0' }).serverHost, '::');
    assert.throws(() => config({ SERVER_HOST: 'localhost' }), { message: "SERVER_HOST='localhost' is invalid: expected an IP address such as 0.0.0.0 or ::" });
    assert.throws(() => config({ SERVER_CORS_ORIGINS: 'https://a.example/path' }), ConfigError);
    assert.equal(config({ SERVER_CALL_TIMEOUT: '1e1' }).serverCallTimeout, 10);
    assert.throws(() => config({ SERVER_CALL_TIMEOUT: 'inf' }), ConfigError);
  });
  test("FUNC_HANDLER=module.function, as Kubeless sets it; a contradiction is refused", () => {
    const c = config({ FUNC_HANDLER: 'handler.run' });
    assert.deepEqual([c.handlerModuleName, c.handlerFunctionName], ['handler', 'run']);
    assert.throws(() => config({ FUNC_HANDLER: 'other.run', HANDLER_MODULE_NAME: 'handler' }), { message: "FUNC_HANDLER='other.run' names module 'other' but HANDLER_MODULE_NAME='handler'; set the module in one of them only" });
  });
  test("HANDLER_PATH may name the file, as Kyma's Node runtimes set it", () => {
    const c = fromEnv({ HANDLER_PATH: './function/handler.js' });
    assert.deepEqual([c.handlerFolder, c.handlerModuleName], ['./function', 'handler.js']);
    assert.equal(fromEnv({ HANDLER_PATH: '/srv/fn' }).handlerFolder, '/srv/fn');
  });
  test('unset folder and module: the first default that holds a module file', () => {
    const c = fromEnv({});
    assert.ok(['/', '/usr/src/app/function'].includes(c.handlerFolder));
  });
  test('refused combinations', () => {
    assert.throws(() => config({ SERVER_METRICS_PORT: '8080' }), { message: 'SERVER_METRICS_PORT=8080 is refused: it is SERVER_PORT; choose another port, or 0 to serve metrics on SERVER_PORT' });
    assert.throws(() => config({ SERVER_MAX_REQUESTS: '10' }), { message: "SERVER_MAX_REQUESTS='10' is refused with SERVER_ADAPTER='node': only gunicorn recycles a worker after a number of calls" });
    assert.throws(() => config({ HANDLER_FUNCTION_NAME: 'not-an-identifier' }), { message: "HANDLER_FUNCTION_NAME='not-an-identifier' is invalid: expected a JavaScript identifier such as 'main'" });
    assert.throws(() => config({ HANDLER_MODULE_NAME: '../up' }), ConfigError);
  });
  test('overrides win and unknown ones are refused', () => {
    assert.equal(fromEnv({ SERVER_PORT: '1' }, { serverPort: 2 }).serverPort, 2);
    assert.throws(() => fromEnv({}, { noSuch: 1 }), /unknown setting\(s\) noSuch/);
  });
  test('every setting is declared once, with a description and what is expected', () => {
    const names = SETTINGS.flatMap((s) => [s.env, ...s.aliases.map((a) => a.name)]);
    assert.equal(new Set(names).size, names.length);
    for (const s of settingsList()) assert.ok(s.description && s.expected, s.env);
  });
  test("pyRepr quotes like Python's repr", () => {
    assert.equal(pyRepr('a'), "'a'");
    assert.equal(pyRepr("it's"), '"it\'s"');
    assert.equal(pyRepr('a\nb\\'), "'a\\nb\\\\'");
  });
});

describe('the slow-client settings, as funcwsgi reads them', () => {
  test("defaults: funcwsgi's, and its event-loop bound on calls in flight", () => {
    const c = fromEnv({});
    assert.deepEqual(
      [c.serverHeaderTimeout, c.serverBodyTimeout, c.serverSendTimeout, c.serverKeepaliveTimeout, c.serverMaxConnections, c.serverMaxInflight],
      [10, 10, 30, 7200, 1000, null],
    );
    assert.equal(maxInflight(c), MAX_INFLIGHT);
    assert.equal(MAX_INFLIGHT, 1000);
  });
  test('SERVER_MAX_INFLIGHT: 0 lifts the bound; empty is unset; SERVER_NUMTHREADS does not change it', () => {
    assert.equal(maxInflight(config({ SERVER_MAX_INFLIGHT: '0' })), 0);
    assert.equal(maxInflight(config({ SERVER_MAX_INFLIGHT: ' 7 ' })), 7);
    assert.equal(config({ SERVER_MAX_INFLIGHT: '' }).serverMaxInflight, null);
    assert.equal(maxInflight(config({ SERVER_NUMTHREADS: '4' })), 1000);
  });
  test('seconds may be fractions or exponents; integers are integers', () => {
    assert.equal(config({ SERVER_HEADER_TIMEOUT: '0.25' }).serverHeaderTimeout, 0.25);
    assert.equal(config({ SERVER_SEND_TIMEOUT: '1e1' }).serverSendTimeout, 10);
    assert.equal(config({ SERVER_MAX_CONNECTIONS: '+20' }).serverMaxConnections, 20);
  });
  const bad = [
    ['SERVER_HEADER_TIMEOUT', '0', 'a positive number of seconds up to 1000000'],
    ['SERVER_BODY_TIMEOUT', '-1', 'a positive number of seconds up to 1000000'],
    ['SERVER_SEND_TIMEOUT', 'inf', 'a positive number of seconds up to 1000000'],
    ['SERVER_KEEPALIVE_TIMEOUT', 'soon', 'a positive number of seconds up to 1000000'],
    ['SERVER_KEEPALIVE_TIMEOUT', '', 'a positive number of seconds up to 1000000'],
    ['SERVER_KEEPALIVE_TIMEOUT', '1e10', 'a positive number of seconds up to 1000000'],
    ['SERVER_CALL_TIMEOUT', '1000000.5', 'a non-negative number of seconds up to 1000000'],
    ['HANDLER_FOLDER', '', 'a folder path'],
    ['SERVER_MAX_CONNECTIONS', '0', 'a positive integer'],
    ['SERVER_MAX_CONNECTIONS', '1.5', 'a positive integer'],
    ['SERVER_MAX_INFLIGHT', '-1', 'a non-negative integer'],
    ['SERVER_MAX_INFLIGHT', 'many', 'a non-negative integer'],
  ];
  for (const [name, value, expected] of bad) {
    test(`${name}=${pyRepr(value)} is refused naming the variable, the value and what is expected`, () => {
      assert.throws(() => config({ [name]: value }), { name: 'ConfigError', message: `${name}=${pyRepr(value)} is invalid: expected ${expected}` });
    });
  }
  test("node:http's own limits from the settings: milliseconds, its keep-alive timer off (the sweep's), no whole-request bound", () => {
    const options = serverOptions(config({ SERVER_HEADER_TIMEOUT: '1.5', SERVER_KEEPALIVE_TIMEOUT: '0.0001' }));
    assert.deepEqual(options, { headersTimeout: 1500, requestTimeout: 0, keepAliveTimeout: 0, requireHostHeader: false, connectionsCheckingInterval: SWEEP_MS });
    // Node takes a timer past 2^31-1 ms for 1 ms; the longest setting (MAX_SECONDS) stays below it.
    assert.equal(serverOptions(config({ SERVER_HEADER_TIMEOUT: '1000000' })).headersTimeout, 1e9);
    assert.equal(serverOptions(config({ SERVER_HEADER_TIMEOUT: '0.0001' })).headersTimeout, 1);
  });
  test("the runtime's own 408 and 503 are funcwsgi's bytes", () => {
    assert.equal(REQUEST_TIMEOUT.toString('latin1'), 'HTTP/1.1 408 Request Timeout\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 34\r\nConnection: close\r\n\r\nthe request did not arrive in time');
    assert.equal(OVERLOADED.toString('latin1'), 'HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 33\r\nRetry-After: 1\r\nConnection: close\r\n\r\nthe function is busy; retry later');
  });
});

describe('signatures, detected once from the parameters', () => {
  const cases = [
    [function main(req, res) {}, Signature.REQ_RES],
    [async (req, res) => {}, Signature.REQ_RES],
    [(req) => req, Signature.REQ],
    [req => req, Signature.REQ],
    [() => 1, Signature.NONE],
    [function main(event, context) {}, Signature.EVENT_CONTEXT],
    [function main(event) {}, Signature.EVENT_CONTEXT],
    [async function main(event, context, callback) {}, Signature.EVENT_CONTEXT],
    [(...args) => args, Signature.REQ_RES],
    [function main({ body }, res = {}) {}, Signature.REQ_RES],
    [function main(req, /* res */ response) {}, Signature.REQ_RES],
  ];
  for (const [fn, expected] of cases) {
    test(`${String(fn).slice(0, 50)} -> ${expected}`, () => assert.equal(detectSignature(fn, null, "'main'"), expected));
  }
  test('HANDLER_SIGNATURE overrides', () => assert.equal(detectSignature((req, res) => 1, 'none', "'main'"), Signature.NONE));
  test('three parameters not starting with event are refused', () => {
    assert.throws(() => detectSignature((a, b, c) => 1, null, "'main' in f.js"), { message: "'main' in f.js takes 3 parameters (a, b, c); expected main(req, res), main(req), main() or main(event, context)" });
  });
  test('parameter names of a method', () => assert.deepEqual(parameterNames({ main(req, res) {} }.main), ['req', 'res']));
});

describe('return values as bodies', () => {
  const type = (value) => encodeBody(value).contentType;
  test('string, Buffer, typed arrays, objects, arrays, numbers, null', () => {
    assert.equal(type('x'), 'text/plain; charset=utf-8');
    assert.equal(type(Buffer.from('x')), 'application/octet-stream');
    assert.equal(type(new Uint16Array(2)), 'application/octet-stream');
    assert.equal(encodeBody(new Uint16Array(2)).data.length, 4);
    assert.equal(type({ a: 1 }), 'application/json');
    assert.equal(encodeBody([1, 'two']).data.toString(), '[1,"two"]');
    assert.equal(encodeBody(5).data.toString(), '5');
    assert.equal(encodeBody('ü').data, 'ü', 'a string stays a string (one write with the head)');
    assert.equal(encodeBody(null).data.length, 0);
    assert.equal(encodeBody(undefined).contentType, 'text/plain; charset=utf-8');
  });
  test('iterators and async iterables stream', () => {
    function* gen() { yield 'a'; }
    assert.ok(encodeBody(gen()).stream);
    assert.ok(encodeBody((async function* g() {})()).stream);
  });
  test('a function or a symbol cannot be a body', () => {
    assert.throws(() => encodeBody(() => 1), UnsupportedResponse);
    assert.throws(() => encodeBody(Symbol('s')), UnsupportedResponse);
  });
});

const incoming = (headers = {}, url = '/p?a=1') => ({ method: 'POST', url, headers, socket: { remoteAddress: '127.0.0.1' } });

describe('the request', () => {
  test('JSON, text, form, bytes, none', () => {
    assert.deepEqual(new FunctionRequest(incoming({ 'content-type': 'application/json; charset=utf-8' }), Buffer.from('{"a":[1]}')).body, { a: [1] });
    assert.deepEqual(new FunctionRequest(incoming({ 'content-type': 'application/json' }), Buffer.alloc(0)).body, {});
    assert.equal(new FunctionRequest(incoming({ 'content-type': 'text/csv' }), Buffer.from('a,b')).body, 'a,b');
    assert.ok(Buffer.isBuffer(new FunctionRequest(incoming({ 'content-type': 'image/png' }), Buffer.from('x')).body));
    assert.equal(new FunctionRequest(incoming(), null).body, undefined);
    assert.deepEqual(new FunctionRequest(incoming({ 'content-type': 'application/x-www-form-urlencoded' }), Buffer.from('a=1&a=2&b=')).form, { a: ['1', '2'], b: '' });
  });
  test('a body that is not JSON is an HTTP 400 error, thrown on first read', () => {
    const req = new FunctionRequest(incoming({ 'content-type': 'application/json' }), Buffer.from('{'));
    assert.throws(() => req.body, (error) => error instanceof HttpError && error.status === 400);
    assert.throws(() => req.json, HttpError);
  });
  test("path as sent (Express's), query both ways, get() any case", () => {
    const req = new FunctionRequest(incoming({ referer: 'r', 'x-a': 'b' }, '/a%20b?x=1&x=2&y=3'), null);
    assert.equal(req.path, '/a%20b');
    assert.deepEqual(req.query, Object.assign(Object.create(null), { x: ['1', '2'], y: '3' }));
    assert.deepEqual(req.args.getAll('x'), ['1', '2']);
    assert.equal(req.queryString, 'x=1&x=2&y=3');
    assert.equal(req.get('X-A'), 'b');
    assert.equal(req.get('Referrer'), 'r');
  });
  test("is() as Express's", () => {
    const req = new FunctionRequest(incoming({ 'content-type': 'application/vnd.api+json' }), Buffer.from('{}'));
    assert.equal(req.is('json'), false, "as Express's: json means application/json");
    assert.equal(req.is('+json'), '+json');
    assert.equal(new FunctionRequest(incoming({ 'content-type': 'application/json; charset=utf-8' }), Buffer.from('{}')).is('json'), 'json');
    assert.equal(req.is('text/*'), false);
    assert.equal(new FunctionRequest(incoming(), null).is('json'), null);
    assert.ok(typeMatches('text/plain', 'text/*'));
  });
});

describe('res', () => {
  const res = () => new FunctionResponse({ answerWith() {}, outgoing: {} });
  test('a status must be an integer from 100 to 999', () => {
    assert.throws(() => res().setCode(99), { message: 'status code must be an integer from 100 to 999, got 99' });
    assert.throws(() => res().status('200'), { message: "status code must be an integer from 100 to 999, got '200'" });
    assert.equal(res().set_code(204).statusCode, 204);
  });
  test('headers: set replaces, add/append adds, set(object), type() shorthands', () => {
    const r = res().setHeader('X-A', '1').setHeader('x-a', '2').addHeader('Set-Cookie', 'a=1').append('Set-Cookie', ['b=2']).set({ 'X-B': 3 }).type('html');
    assert.equal(r.getHeader('x-a'), '2');
    assert.deepEqual(r.headers.getSetCookie(), ['a=1', 'b=2']);
    assert.equal(r.get('x-b'), '3');
    assert.equal(r.contentType, 'text/html; charset=utf-8');
    assert.ok(r.touched);
  });
  test('a value with a newline is refused (no header injection)', () => {
    assert.throws(() => res().setHeader('X-A', 'a\r\nX-Injected: 1'), TypeError);
  });
  test('setJson encodes now, setText and setData set their types', () => {
    assert.equal(res().setJson({ a: 1 }).body.toString(), '{"a":1}');
    assert.equal(res().setText('t').contentType, 'text/plain; charset=utf-8');
    assert.equal(res().setData('d').contentType, 'application/octet-stream');
  });
});

describe('CloudEvents', () => {
  const binary = { 'ce-specversion': '1.0', 'ce-type': 't', 'ce-source': '/s', 'ce-id': '1' };
  test('binary data by content type: JSON parsed, text a string, other bytes', () => {
    assert.deepEqual(decode({ ...binary, 'content-type': 'application/json' }, Buffer.from('{"a":1}')).data, { a: 1 });
    assert.equal(decode({ ...binary, 'content-type': 'text/plain' }, Buffer.from('hi')).data, 'hi');
    assert.ok(decode({ ...binary, 'content-type': 'application/octet-stream' }, Buffer.from('hi')).data instanceof Uint8Array);
  });
  test('malformed events name what is wrong', () => {
    assert.throws(() => decode({ 'ce-type': 't' }, Buffer.alloc(0)), { message: 'missing required CloudEvent header(s): ce-id, ce-source, ce-specversion' });
    assert.throws(() => decode({ 'content-type': 'application/cloudevents+json' }, Buffer.from('[1]')), { message: 'the structured CloudEvent must be a JSON object' });
    assert.throws(() => decode({ 'content-type': 'application/cloudevents+json' }, Buffer.from('{"type":"t"}')), MalformedCloudEvent);
  });
  test('made events fill in id, specversion, time and a content type; binary encoding', () => {
    const event = makeEvent({ type: 'x', source: '/y' }, { a: 1 });
    assert.ok(event.id && event.time);
    assert.equal(event.datacontenttype, 'application/json');
    const { headers, body } = toBinary(event);
    assert.equal(headers['ce-type'], 'x');
    assert.equal(body.toString(), '{"a":1}');
    assert.throws(() => makeEvent({ type: 'x' }, null), TypeError);
  });
});

describe('CORS decisions', () => {
  const cors = (env) => new Cors(config(env));
  test('no Origin: nothing to do', () => assert.equal(cors({ SERVER_CORS_ORIGINS: '*' }).consider('GET', {}), null));
  test('with listed origins every answer varies by origin, those without CORS headers too (Fetch: CORS and HTTP caches)', () => {
    const listed = cors({ SERVER_CORS_ORIGINS: 'https://shop.example' });
    assert.deepEqual(listed.consider('GET', {}), { headers: ['Vary', 'Origin'] });
    assert.deepEqual(listed.consider('GET', { origin: 'https://evil.example' }), { headers: ['Vary', 'Origin'] });
    const [status, headers] = listed.consider('OPTIONS', { origin: 'https://evil.example', 'access-control-request-method': 'GET' }).preflight;
    assert.equal(status, 403);
    assert.ok(headers.includes('Vary'));
  });
  test('a wildcard without credentials answers * and no Vary', () => {
    const { headers } = cors({ SERVER_CORS_ORIGINS: '*' }).consider('GET', { origin: 'https://a.example' });
    assert.deepEqual(headers.slice(0, 2), ['Access-Control-Allow-Origin', '*']);
    assert.ok(!headers.includes('Vary'));
  });
  test('requested headers are echoed only when they are header names', () => {
    const [, headers] = cors({ SERVER_CORS_ORIGINS: '*' }).consider('OPTIONS', { origin: 'o', 'access-control-request-method': 'GET', 'access-control-request-headers': 'a b' }).preflight;
    assert.ok(!headers.includes('Access-Control-Allow-Headers'));
  });
  test('credentials', () => {
    const { headers } = cors({ SERVER_CORS_ORIGINS: 'https://a.example', SERVER_CORS_CREDENTIALS: 'true' }).consider('GET', { origin: 'https://a.example' });
    assert.ok(headers.includes('Access-Control-Allow-Credentials'));
  });
});

describe("Kyma's context and the start-up lines", () => {
  test('context keys', () => {
    const context = buildContext(config({ FUNC_NAME: 'f', FUNC_NAMESPACE: 'n', FUNC_MEMORY_LIMIT: '1Gi', FUNC_BODY_MB_LIMIT: '3' }), 'main');
    assert.deepEqual(context, { 'function-name': 'f', namespace: 'n', timeout: 180, runtime: 'nodejs26', 'memory-limit': '1Gi', 'body-size-limit': 3 });
  });
  test('the four lines with tracing and a publisher', () => {
    assert.deepEqual(startupLines(config({ TRACE_COLLECTOR_ENDPOINT: 'http://c:4318/v1/traces', PUBLISHER_PROXY_ADDRESS: 'http://p/publish', SERVER_HOST: '::', SERVER_PORT: '9' })), [
      `Importing function sources from ${functions('paths')}/handler.mjs:main`,
      'Tracing configured with endpoint http://c:4318/v1/traces',
      'Publisher Proxy available on address http://p/publish',
      'Starting nodejs26 server :::9',
    ]);
  });
});

describe('log records', () => {
  test('JSON: the fields of funcwsgi, the call-free record without ids, an error as exc_info', () => {
    const lines = [];
    configureLogging(config({ FUNC_NAME: 'fn', FUNC_NAMESPACE: 'ns', SERVER_LOG_LEVEL: 'info' }), (line) => lines.push(line));
    const log = getLogger('function');
    log.debug('hidden');
    log.info('count %d', 3, { order: 7 });
    log.exception('failed', new Error('boom'));
    const [first, second] = lines.map((line) => JSON.parse(line));
    assert.equal(lines.length, 2);
    assert.deepEqual(Object.keys(first), ['timestamp', 'level', 'logger', 'message', 'function', 'namespace', 'order']);
    assert.deepEqual([first.level, first.message, first.function, first.order], ['INFO', 'count 3', 'fn', 7]);
    assert.match(first.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.match(second.exc_info, /^Error: boom\n/);
  });
  test('text format for local development', () => {
    const lines = [];
    configureLogging(config({ SERVER_LOG_FORMAT: 'text' }), (line) => lines.push(line));
    getLogger('function').warning('careful');
    assert.match(lines[0], /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} WARNING function: careful\n$/);
  });
});

describe('Express-style functions, recognised once from their source', async () => {
  const { answersThroughRes } = await import('../lib/signatures.js');
  for (const [fn, expected] of [
    [function main(req, res) { setTimeout(() => res.send('later')); }, true],
    [function main(req, res) { res.status(200).send('x'); }, true],
    [(req, response) => { helper(req, response); }, true],
    [function main(req, res) { res.setCode(204); }, false],
    [function main(req, res) { return undefined; }, false],
    [(req) => req, false],
  ]) {
    test(`${String(fn).slice(0, 60)} -> ${expected}`, () => assert.equal(answersThroughRes(fn), expected));
  }
});
function helper() {}

describe('the call path as funcwsgi logs its stack', async () => {
  const { describeSteps } = await import('../lib/server.js');
  test('defaults', () => {
    assert.equal(describeSteps(config({})).join(' > '), 'errors > request-id > reserved-routes > metrics > body-limit > cancellation > timeout > cloudevents > function');
  });
  test('settings that are not their default are shown, in Python str() form', () => {
    assert.equal(describeSteps(config({ SERVER_CALL_TIMEOUT: '2', SERVER_MAX_BODY_SIZE: '1000', SERVER_CORS_ORIGINS: '*' })).join(' > '), 'errors > request-id > reserved-routes > cors(origins=*) > metrics > body-limit(max_bytes=1000) > cancellation(seconds=2.0) > timeout(seconds=2.0) > cloudevents > function');
  });
});

describe('framingProblem: what node:http accepts and RFC 9112 refuses, as funcwsgi\'s worker refuses it', () => {
  const request = (url, rawHeaders, { method = 'GET', httpVersion = '1.1' } = {}) => {
    const headers = {};
    for (let i = 0; i < rawHeaders.length; i += 2) headers[rawHeaders[i].toLowerCase()] ??= rawHeaders[i + 1];
    return { url, method, httpVersion, rawHeaders, headers };
  };
  test('an origin-form target with one Host passes', () => {
    assert.equal(framingProblem(request('/a?b', ['Host', 'x'])), null);
  });
  test('an absolute-form target becomes the path it names', () => {
    const incoming = request('HTTP://x:80/healthz?y', ['Host', 'x']);
    assert.equal(framingProblem(incoming), null);
    assert.equal(incoming.url, '/healthz?y');
    const bare = request('http://x?q', ['Host', 'x']);
    framingProblem(bare);
    assert.equal(bare.url, '/?q');
  });
  test('other targets are refused, OPTIONS * aside', () => {
    assert.equal(framingProblem(request('*', ['Host', 'x'])), 'the request is malformed');
    assert.equal(framingProblem(request('x:80', ['Host', 'x'])), 'the request is malformed');
    assert.equal(framingProblem(request('*', ['Host', 'x'], { method: 'OPTIONS' })), null);
  });
  test('a Transfer-Encoding other than chunked alone, and a missing or repeated Host, are refused', () => {
    assert.match(framingProblem(request('/', ['Host', 'x', 'Transfer-Encoding', 'identity, chunked'])), /Transfer-Encoding/);
    assert.equal(framingProblem(request('/', ['Host', 'x', 'Transfer-Encoding', 'Chunked'])), null);
    assert.match(framingProblem(request('/', [])), /Host/);
    assert.match(framingProblem(request('/', ['Host', 'x', 'host', 'y'])), /Host/);
    assert.equal(framingProblem(request('/', [], { httpVersion: '1.0' })), null);
  });
});

describe('admission by queueing delay (lib/admission.js, as funcwsgi/serving/admission.py)', () => {
  const clocked = (target, servers, service) => {
    const clock = { now: 0 };
    const admission = new Admission(target, servers, { clock: () => clock.now });
    if (service !== undefined) admission.finished(service);
    return [admission, clock];
  };
  test('a free thread always takes the call; a burst cleared within the target is queued whole', () => {
    const [admission] = clocked(1, 50, 0.02);
    for (let inflight = 0; inflight < 200; inflight += 1) assert.ok(admission.admit(inflight));
    assert.ok(admission.admit(50 + 2249));
    assert.ok(!admission.admit(50 + 2250));
  });
  test('a call that would wait past the target is refused at once; the start is the backstop', () => {
    const [admission] = clocked(1, 4, 0.25);
    assert.ok(admission.admit(4 + 13));
    assert.ok(!admission.admit(4 + 14));
    assert.ok(admission.start(0.999));
    assert.ok(!admission.start(1.001));
  });
  test('on the loop: shed while every lag over an interval stood past the target', () => {
    const [loop, clock] = clocked(1, 0);
    assert.ok(loop.admit(100000));
    loop.observe(1.5);
    clock.now += INTERVAL / 2;
    loop.observe(1.5);
    assert.ok(loop.admit(0));
    clock.now += INTERVAL / 2;
    loop.observe(1.5);
    assert.ok(!loop.admit(0));
    loop.observe(0.001);
    assert.ok(loop.admit(0));
  });
  test('SERVER_QUEUE_TARGET: at most SERVER_CALL_TIMEOUT, with one clear line', () => {
    assert.equal(config({}).serverQueueTarget, 1);
    assert.throws(() => config({ SERVER_QUEUE_TARGET: '5', SERVER_CALL_TIMEOUT: '3' }), {
      message: 'SERVER_QUEUE_TARGET=5 is invalid: expected at most SERVER_CALL_TIMEOUT (3), since a caller waits no longer than a call may take',
    });
    assert.equal(config({ SERVER_QUEUE_TARGET: '5', SERVER_CALL_TIMEOUT: '0' }).serverQueueTarget, 5);
    assert.throws(() => config({ SERVER_QUEUE_TARGET: '0' }), { message: "SERVER_QUEUE_TARGET='0' is invalid: expected a positive number of seconds up to 1000000" });
  });
});

test("SERVER_QUEUE_TARGET's default is a shorter SERVER_CALL_TIMEOUT", () => {
  assert.equal(config({ SERVER_CALL_TIMEOUT: '0.5' }).serverQueueTarget, 0.5);
  assert.equal(config({ SERVER_CALL_TIMEOUT: '0' }).serverQueueTarget, 1);
});
