// Start-up as the operator sees it: a bad setting or a function that cannot load is
// one line on stderr and exit 2, before listening; start()/stop() hooks; graceful
// SIGTERM; the metrics port; the sdk from a CommonJS function.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { freePort, functions, runToExit, startRuntime } from './helpers.js';

const oneLine = (stderr) => stderr.trimEnd().split('\n')[0];

describe('a bad setting: one line naming the variable, the value and what is expected; exit 2', () => {
  for (const [env, line] of [
    [{ SERVER_PORT: 'eighty' }, "funcwsgi: error: SERVER_PORT='eighty' is invalid: expected an integer from 1 to 65535"],
    [{ FUNC_PORT: '0' }, "funcwsgi: error: FUNC_PORT='0' is invalid: expected an integer from 1 to 65535"],
    [{ SERVER_CALL_TIMEOUT: '-1' }, "funcwsgi: error: SERVER_CALL_TIMEOUT='-1' is invalid: expected a non-negative number of seconds up to 1000000"],
    [{ FUNC_TIMEOUT: 'soon' }, "funcwsgi: error: FUNC_TIMEOUT='soon' is invalid: expected a non-negative number of seconds up to 1000000"],
    [{ FUNC_BODY_MB_LIMIT: 'big' }, "funcwsgi: error: FUNC_BODY_MB_LIMIT='big' is invalid: expected a non-negative number of megabytes"],
    [{ SERVER_LOG_LEVEL: 'loud' }, "funcwsgi: error: SERVER_LOG_LEVEL='loud' is invalid: expected one of debug, info, warning, error, critical"],
    [{ HANDLER_SIGNATURE: 'two' }, "funcwsgi: error: HANDLER_SIGNATURE='two' is invalid: expected one of req-res, req, none, event-context"],
    [{ SERVER_ADAPTER: 'gunicorn' }, "funcwsgi: error: SERVER_ADAPTER='gunicorn' is invalid: expected one of node"],
    [{ SERVER_WORKERS: '4' }, "funcwsgi: error: SERVER_WORKERS='4' is refused: nodejs26 serves from one process; run more replicas instead"],
    [{ TRACE_COLLECTOR_ENDPOINT: 'collector:4318' }, "funcwsgi: error: TRACE_COLLECTOR_ENDPOINT='collector:4318' is invalid: expected an http:// or https:// URL"],
    [{ OTEL_PROPAGATORS: 'tracecontext,jaeger' }, "funcwsgi: error: OTEL_PROPAGATORS='tracecontext,jaeger' is invalid: no propagator 'jaeger'; installed: b3, b3multi, baggage, none, tracecontext"],
    [{ SERVER_CORS_ORIGINS: '*', SERVER_CORS_CREDENTIALS: 'true' }, "funcwsgi: error: SERVER_CORS_CREDENTIALS=true with SERVER_CORS_ORIGINS='*' is refused: browsers reject credentials for a wildcard origin; list the allowed origins instead"],
  ]) {
    test(Object.entries(env).map(([k, v]) => `${k}=${v}`).join(' '), async () => {
      const { code, stdout, stderr } = await runToExit({ HANDLER_FOLDER: functions('cors'), ...env });
      assert.equal(code, 2);
      assert.equal(stderr.trimEnd(), line);
      assert.equal(stdout, '', 'nothing printed before the settings are read');
    });
  }
});

describe('a function that cannot load: one line, the user stack when its code threw; exit 2, never "Starting"', () => {
  const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'nodejs26-empty-'));
  for (const [name, env, expected] of [
    ['the folder does not exist', { HANDLER_FOLDER: '/no/such/folder' }, "funcwsgi: error: HANDLER_FOLDER '/no/such/folder' does not exist"],
    ['the folder is empty', { HANDLER_FOLDER: empty }, `funcwsgi: error: no handler.js, handler.mjs or handler.cjs in ${empty}: the folder is empty`],
    ['no module file: the folder listed', { HANDLER_FOLDER: functions('kyma-legacy') }, `funcwsgi: error: no handler.js, handler.mjs or handler.cjs in ${functions('kyma-legacy')}; the folder holds: function`],
    ['no such export: the exports found', { HANDLER_FOLDER: functions('no-main') }, `funcwsgi: error: no function 'main' in ${functions('no-main')}/handler.mjs; found: handle, helper`],
    ['the export is no function', { HANDLER_FOLDER: functions('not-function') }, `funcwsgi: error: 'main' in ${functions('not-function')}/handler.mjs is a number, not a function`],
    ['a syntax error in an ES module: file and line', { HANDLER_FOLDER: functions('syntax-esm') }, `funcwsgi: error: syntax error in ${functions('syntax-esm')}/handler.mjs line 2: Unexpected token ';'`],
    ['a syntax error in CommonJS: file and line', { HANDLER_FOLDER: functions('syntax-cjs') }, `funcwsgi: error: syntax error in ${functions('syntax-cjs')}/handler.js line 2: Unexpected token '}'`],
    ['a missing package', { HANDLER_FOLDER: functions('missing-import') }, `funcwsgi: error: ${functions('missing-import')}/handler.mjs failed to import 'no-such-package-7f3a': Cannot find package 'no-such-package-7f3a' imported from ${functions('missing-import')}/handler.mjs; is it in the function's package.json dependencies?`],
    ['the module throws', { HANDLER_FOLDER: functions('throws') }, `funcwsgi: error: importing ${functions('throws')}/handler.mjs raised TypeError: module-level failure`],
    ['start() rejects', { HANDLER_FOLDER: functions('start-fails') }, `funcwsgi: error: start() in ${functions('start-fails')}/handler.mjs raised Error: cannot reach the database`],
    ['a hook that needs arguments', { HANDLER_FOLDER: functions('hook-needs-arguments') }, `funcwsgi: error: ready() in ${functions('hook-needs-arguments')}/handler.mjs requires 1 argument(s) (probe); the runtime calls ready() with none`],
    ['a hook that is no function', { HANDLER_FOLDER: functions('hook-not-function') }, `funcwsgi: error: 'stop' in ${functions('hook-not-function')}/handler.mjs is a string, not a function; the runtime calls stop() with no arguments`],
    ['HANDLER_FUNCTION_NAME names another export', { HANDLER_FOLDER: functions('no-main'), HANDLER_FUNCTION_NAME: 'missing' }, `funcwsgi: error: no function 'missing' in ${functions('no-main')}/handler.mjs; found: handle, helper`],
  ]) {
    test(name, async () => {
      const { code, stdout, stderr } = await runToExit(env);
      assert.equal(code, 2);
      assert.equal(oneLine(stderr), expected);
      assert.match(stdout, /^Importing function sources from \S+:\w+\n$/, 'only the first start-up line');
    });
  }
  test("the module's own stack follows the line", async () => {
    const { stderr } = await runToExit({ HANDLER_FOLDER: functions('throws') });
    assert.match(stderr, /TypeError: module-level failure\n\s+at .*throws\/handler\.mjs:2/);
    assert.doesNotMatch(stderr, /nodejs26\/lib\//, "none of the runtime's frames");
  });
  test('the port already in use', async () => {
    const busy = http.createServer();
    await new Promise((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const { code, stderr } = await runToExit({ HANDLER_FOLDER: functions('cors'), SERVER_PORT: String(busy.address().port) });
    busy.close();
    assert.equal(code, 2);
    assert.equal(stderr.trimEnd(), `funcwsgi: error: cannot listen on SERVER_HOST='127.0.0.1' SERVER_PORT=${busy.address()?.port ?? stderr.match(/SERVER_PORT=(\d+)/)[1]}: address already in use`);
  });
});

describe('serving', () => {
  test('require("sdk") from a CommonJS function, index.cjs found when no handler.* exists, main(req) detected', async () => {
    const runtime = await startRuntime({ HANDLER_FOLDER: functions('cjs-require-sdk') });
    try {
      const body = await (await runtime.fetch('/')).json();
      assert.deepEqual(body, { runtime: 'nodejs26', same: true, signature: 'req' });
      assert.match(runtime.stdout, /^Importing function sources from \S+\/cjs-require-sdk\/index\.cjs:main$/m);
    } finally {
      await runtime.stop();
    }
  });
  test('async ready() and a throwing alive(): 503, the hook error only in the log', async () => {
    const runtime = await startRuntime({ HANDLER_FOLDER: functions('hooks-async'), SERVER_CALL_TIMEOUT: '0' });
    try {
      const ready = await runtime.fetch('/health/readiness');
      assert.deepEqual([ready.status, await ready.text()], [503, 'ready() returned False']);
      const alive = await runtime.fetch('/health/liveness');
      assert.deepEqual([alive.status, await alive.text()], [503, 'alive() failed']);
      const record = await runtime.waitFor((r) => r.records().find((x) => x.logger === 'funcwsgi.health'), 'the hook failure');
      assert.match(record.exc_info, /alive-secret/);
    } finally {
      await runtime.stop();
    }
  });
  test('SIGTERM: the call in flight finishes, new connections are refused, stop() runs, exit 0', async () => {
    const runtime = await startRuntime({ HANDLER_FOLDER: functions('graceful') });
    setTimeout(() => runtime.child.kill('SIGKILL'), 10_000).unref();
    assert.match(runtime.stdout, /"message":"start hook ran"/);
    const slow = runtime.fetch('/slow').then(async (r) => [r.status, await r.text()]);
    await new Promise((r) => setTimeout(r, 200));
    runtime.child.kill('SIGTERM');
    await runtime.waitFor((r) => r.stdout.includes('Received SIGTERM'), 'the shutdown record');
    await assert.rejects(runtime.fetch('/fast'), 'a new connection is refused');
    assert.deepEqual(await slow, [200, 'done']);
    assert.deepEqual(await runtime.exitedPromise, { code: 0, signal: null });
    assert.match(runtime.stdout, /"message":"stop hook ran"/);
  });
  test('CORS: preflight answered by the runtime, allowed origins get the headers, others nothing', async () => {
    const runtime = await startRuntime({ HANDLER_FOLDER: functions('cors'), SERVER_CORS_ORIGINS: 'https://shop.example', SERVER_INTERNAL_LOGGER: 'true' });
    try {
      const preflight = await runtime.fetch('/', { method: 'OPTIONS', headers: { origin: 'https://shop.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-a, content-type' } });
      assert.equal(preflight.status, 204);
      assert.equal(preflight.headers.get('access-control-allow-origin'), 'https://shop.example');
      assert.equal(preflight.headers.get('access-control-allow-methods'), 'GET, HEAD, POST, PUT, PATCH, DELETE');
      assert.equal(preflight.headers.get('access-control-allow-headers'), 'x-a, content-type');
      assert.equal(preflight.headers.get('access-control-max-age'), '600');
      assert.equal(preflight.headers.get('vary'), 'Origin');
      const refused = await runtime.fetch('/', { method: 'OPTIONS', headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' } });
      assert.deepEqual([refused.status, await refused.text()], [403, 'Forbidden: CORS preflight refused']);
      const simple = await runtime.fetch('/', { headers: { origin: 'https://shop.example' } });
      assert.equal(simple.headers.get('access-control-allow-origin'), 'https://shop.example');
      assert.equal(simple.headers.get('access-control-expose-headers'), 'X-Request-Id');
      const other = await runtime.fetch('/', { headers: { origin: 'https://evil.example' } });
      assert.equal(other.headers.get('access-control-allow-origin'), null);
      assert.equal(await other.text(), 'cors');
      const access = await runtime.waitFor((r) => r.records().find((x) => x.logger === 'funcwsgi.access' && x.path === '/' && x.method === 'GET'), 'an access record (SERVER_INTERNAL_LOGGER, as Kyma names it)');
      assert.deepEqual(Object.keys(access).slice(4), ['function', 'namespace', 'method', 'path', 'status', 'duration_ms', 'bytes', 'request_id']);
      assert.deepEqual([access.message, access.bytes], ['GET / 200', 4]);
    } finally {
      await runtime.stop();
    }
  });
  test('SERVER_METRICS_PORT: the metrics on their own port, not on the calls port', async () => {
    const metricsPort = await freePort();
    const runtime = await startRuntime({ HANDLER_FOLDER: functions('cors'), SERVER_METRICS_PORT: String(metricsPort) });
    try {
      await (await runtime.fetch('/')).text();
      const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      assert.match(metrics, /^function_calls_total\{method="GET"\} 1$/m);
      assert.equal((await fetch(`http://127.0.0.1:${metricsPort}/`)).status, 404);
      assert.equal(await (await runtime.fetch('/metrics')).text(), 'cors', 'the calls port passes /metrics to the function');
    } finally {
      await runtime.stop();
    }
  });
});

test('SERVER_RELOAD: a change in the function folder restarts the runtime with the new code', async () => {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'nodejs26-reload-'));
  fs.writeFileSync(path.join(folder, 'handler.mjs'), "export const main = () => 'first';\n");
  const runtime = await startRuntime({ HANDLER_FOLDER: folder, SERVER_RELOAD: 'true' });
  try {
    assert.equal(await (await runtime.fetch('/')).text(), 'first');
    fs.writeFileSync(path.join(folder, 'handler.mjs'), "export const main = () => 'second';\n");
    const deadline = Date.now() + 10_000;
    let text = '';
    while (Date.now() < deadline) {
      text = await runtime.fetch('/').then((r) => r.text(), () => '');
      if (text === 'second') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(text, 'second');
  } finally {
    assert.deepEqual(await runtime.stop(), { code: 0, signal: null });
  }
});
