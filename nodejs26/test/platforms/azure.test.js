// Azure Functions' Node.js v4 programming model on nodejs26 (lib/platforms/azure.js): the
// host's routes, and sample apps laid out as `func init` lays them out, served with the
// '@azure/functions' library in their node_modules (the real one, from npm, registering
// through the runtime's '@azure/functions-core') and without it (the runtime's stand-in):
// the same answers either way.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fromEnv } from '../../lib/config.js';
import { recognise } from '../../lib/platforms/index.js';
import { setCookie } from '../../lib/platforms/azure/host.js';
import { byPrecedence, compileRoute, matchRoute } from '../../lib/platforms/azure/routes.js';
import { functions, runToExit, startRuntime } from '../helpers.js';
import { deployed, installed, removeDeployed } from './libraries.js';

const LOOPBACK = new URL('./loopback.js', import.meta.url).pathname;

describe('the host routes as ASP.NET Core routes', () => {
  const route = (template, prefix = 'api') => compileRoute(prefix, template);
  for (const [template, path, expected] of [
    ['products/{category:alpha}/{id:int?}', '/api/products/shoes/7', { category: 'shoes', id: '7' }],
    ['products/{category:alpha}/{id:int?}', '/api/products/shoes', { category: 'shoes' }],
    ['products/{category:alpha}/{id:int?}', '/api/products/12', null],
    ['products/{category:alpha}/{id:int?}', '/api/products/shoes/seven', null],
    ['Products/{id}', '/API/products/a%20b', { id: 'a b' }],
    ['files/{*rest}', '/api/files/a/b/c', { rest: 'a/b/c' }],
    ['items/{id:guid}', '/api/items/0f8fad5b-d9cb-469f-a165-70867728950e', { id: '0f8fad5b-d9cb-469f-a165-70867728950e' }],
    ['flags/{on:bool}', '/api/flags/True', { on: 'True' }],
    ['hello', '/api/hello/', {}],
    ['hello', '/hello', null],
  ]) {
    it(`${template} ${path} -> ${JSON.stringify(expected)}`, () => assert.deepEqual(matchRoute(route(template), path), expected));
  }

  it('puts no prefix before the route when routePrefix is empty', () => {
    assert.deepEqual(matchRoute(route('hello', ''), '/hello'), {});
  });

  it('orders literals before constrained parameters before plain ones before catch-alls', () => {
    const routes = ['items/{*rest}', 'items/{id}', 'items/{id:int}', 'items/latest'].map((template) => ({ template, ...route(template) }));
    assert.deepEqual(routes.sort(byPrecedence).map((r) => r.template), ['items/latest', 'items/{id:int}', 'items/{id}', 'items/{*rest}']);
  });

  it('refuses a constraint it does not know, naming the known ones', () => {
    assert.throws(() => route('items/{id:regex(^a$)}'), /uses the constraint 'regex'; known: alpha, bool, datetime/);
  });
});

describe('the cookies the host writes', () => {
  it('writes an RpcHttpCookie as ASP.NET Core writes it', () => {
    const cookie = { name: 'id', value: '7', domain: { value: 'shop.example' }, path: { value: '/' }, expires: { value: { seconds: 0 } }, secure: { value: true }, httpOnly: { value: true }, sameSite: 'strict', maxAge: { value: 60 } };
    assert.equal(setCookie(cookie), 'id=7; expires=Thu, 01 Jan 1970 00:00:00 GMT; max-age=60; domain=shop.example; path=/; secure; samesite=strict; httponly');
  });

  it('writes samesite=none only when the function said None', () => {
    assert.equal(setCookie({ name: 'a', value: 'b', sameSite: 'explicitNone' }), 'a=b; samesite=none');
    assert.equal(setCookie({ name: 'a', value: 'b', sameSite: 'none' }), 'a=b');
  });
});

describe("the stand-in's API", () => {
  // MCP tools and prompts are no HTTP functions: their content helpers are the library's alone.
  const MCP_ONLY = ['McpAudioContent', 'McpContent', 'McpContentBlock', 'McpImageContent', 'McpResourceContent', 'McpResourceLinkContent', 'McpTextContent', 'McpToolResponse', 'PromptInvocationContext', 'arg', 'promptArg'];
  const names = (value) => Object.keys(value).sort();

  it('has every name the installed library exports, but the MCP content helpers', async () => {
    const library = createRequire(path.join(installed('azure-v4'), 'noop.js'))('@azure/functions');
    const standIn = await import('../../lib/platforms/azure/functions.js');
    assert.deepEqual(names(standIn), names(library).filter((name) => !MCP_ONLY.includes(name)));
    for (const part of ['app', 'input', 'output', 'trigger']) assert.deepEqual(names(standIn[part]), names(library[part]), part);
    assert.deepEqual(names(standIn.app.hook), names(library.app.hook));
  });

  it('names bindings as the library does', async () => {
    const library = createRequire(path.join(installed('azure-v4'), 'noop.js'))('@azure/functions');
    const standIn = await import('../../lib/platforms/azure/functions.js');
    for (const make of ['http', 'timer', 'storageQueue', 'eventHub']) assert.deepEqual(standIn.trigger[make]({ route: 'a' }), library.trigger[make]({ route: 'a' }), make);
    assert.deepEqual(standIn.output.http({}), library.output.http({}));
  });
});

describe('recognising an Azure Functions app', () => {
  it('by FUNCTIONS_WORKER_RUNTIME=node', async () => {
    assert.deepEqual(await recognise(fromEnv({ FUNCTIONS_WORKER_RUNTIME: 'node', HANDLER_FOLDER: '/nonexistent' })), { platform: 'azure', why: 'FUNCTIONS_WORKER_RUNTIME=node', others: [] });
  });

  it('by host.json beside package.json, AzureWebJobsScriptRoot naming the folder', async () => {
    assert.equal((await recognise(fromEnv({ AzureWebJobsScriptRoot: functions('azure-v4') }))).platform, 'azure');
  });

  it('not by FUNCTIONS_WORKER_RUNTIME=python', async () => {
    assert.equal((await recognise(fromEnv({ FUNCTIONS_WORKER_RUNTIME: 'python', HANDLER_FOLDER: '/nonexistent' }))).platform, 'funcwsgi');
  });
});

for (const withLibrary of [false, true]) {
  const how = withLibrary ? 'with @azure/functions installed' : 'without @azure/functions installed';

  describe(`the quickstart app ${how}`, () => {
    let folder;
    let runtime;
    before(async () => {
      folder = deployed('azure-v4', { withLibrary });
      runtime = await startRuntime({ FUNCTIONS_WORKER_RUNTIME: 'node', AzureWebJobsScriptRoot: folder });
    });
    after(async () => {
      await runtime?.stop();
      removeDeployed(folder);
    });

    it('registered through the library it was given', () => {
      const line = runtime.records().find((record) => record.message.startsWith('Azure Functions app:'));
      assert.match(line.message, withLibrary ? /registered through @azure\/functions 4\.16\.5$/ : /registered through @azure\/functions 4\.16\.5 \(nodejs26's stand-in\)$/);
    });

    it('answers the HTTP trigger func new writes, by query and by body', async () => {
      const byQuery = await runtime.fetch('/api/httpTrigger1?name=Azure');
      assert.equal(byQuery.status, 200);
      assert.equal(byQuery.headers.get('content-type'), 'text/plain;charset=UTF-8');
      assert.equal(await byQuery.text(), 'Hello, Azure!');
      const byBody = await runtime.fetch('/api/httpTrigger1', { method: 'POST', body: 'body' });
      assert.equal(await byBody.text(), 'Hello, body!');
      // The host hands a repeated query name over once, its values joined by commas.
      assert.equal(await (await runtime.fetch('/api/httpTrigger1?name=a&name=b')).text(), 'Hello, a,b!');
      await runtime.waitFor((r) => r.records().some((record) => record.logger === 'function' && record.message === 'Http function processed request for url "http://127.0.0.1:' + r.port + '/api/httpTrigger1?name=Azure"'), 'context.log');
    });

    it('routes by template, constraint and precedence', async () => {
      const json = async (path) => { const response = await runtime.fetch(path); return [response.status, response.headers.get('content-type'), await response.json()]; };
      assert.deepEqual(await json('/api/products/shoes/7'), [200, 'application/json', { category: 'shoes', id: 7, invocation: 'string' }]);
      assert.deepEqual(await json('/api/products/shoes'), [200, 'application/json', { category: 'shoes', id: null, invocation: 'string' }]);
      assert.equal(await (await runtime.fetch('/api/products/latest')).text(), 'the latest product');
    });

    it('answers 404 with no body where no route or method matches', async () => {
      for (const [path, method] of [['/api/products/12', 'GET'], ['/api/nope', 'GET'], ['/api/products/shoes', 'DELETE'], ['/httpTrigger1', 'GET']]) {
        const response = await runtime.fetch(path, { method });
        assert.deepEqual([response.status, await response.text()], [404, ''], `${method} ${path}`);
      }
    });

    it('writes status, headers and cookies of an HttpResponseInit', async () => {
      const response = await runtime.fetch('/api/products', { method: 'POST', body: JSON.stringify({ name: 'hat' }) });
      assert.equal(response.status, 201);
      assert.equal(response.headers.get('location'), '/api/products/hat');
      assert.deepEqual(response.headers.getSetCookie(), ['last=hat; path=/api; samesite=lax; httponly']);
      assert.deepEqual(await response.json(), { created: 'hat' });
    });

    it('reads request.user from the principal headers as the library does', async () => {
      const principal = Buffer.from(JSON.stringify({ identityProvider: 'github', userId: 'u1', userDetails: 'ann', userRoles: ['authenticated'] })).toString('base64');
      const response = await runtime.fetch('/api/whoami', { headers: { 'x-ms-client-principal': principal } });
      assert.deepEqual(await response.json(), { user: { type: 'StaticWebApps', id: 'u1', username: 'ann', identityProvider: 'github', claimsPrincipalData: { identityProvider: 'github', userId: 'u1', userDetails: 'ann', userRoles: ['authenticated'] } } });
      assert.deepEqual(await (await runtime.fetch('/api/whoami')).json(), { user: null });
    });

    it('writes an HttpResponse with a Buffer body as it is', async () => {
      const response = await runtime.fetch('/api/responseObject', { headers: { 'x-echo': 'bytes' } });
      assert.deepEqual([response.status, response.headers.get('content-type'), await response.text()], [202, 'application/octet-stream', 'bytes']);
    });

    it('answers an empty 500 for a throw or a result that is no response, the reason in the log only', async () => {
      for (const path of ['/api/fails', '/api/returnsText']) {
        const response = await runtime.fetch(path);
        assert.deepEqual([response.status, await response.text()], [500, ''], path);
      }
      await runtime.waitFor((r) => r.records().some((record) => record.logger === 'funcwsgi.errors' && record.exc_info?.includes('hunter2')), 'the error logged');
      assert.ok(!runtime.stdout.includes('hunter2') || runtime.records().every((record) => record.logger === 'funcwsgi.errors' || !JSON.stringify(record).includes('hunter2')));
    });

    it("answers the host's empty 200 when the function returns nothing", async () => {
      const response = await runtime.fetch('/api/returnsNothing');
      assert.deepEqual([response.status, await response.text()], [200, '']);
    });

    it('serves HTTP triggers only, saying which functions it skipped', () => {
      assert.ok(runtime.records().some((record) => record.message === 'Not served (nodejs26 serves HTTP triggers only): nightly (timerTrigger)'));
    });

    it('counts the calls in its metrics and keeps its probes', async () => {
      assert.equal((await runtime.fetch('/healthz')).status, 200);
      await (await runtime.fetch('/api/fails')).text();
      const metrics = await (await runtime.fetch('/metrics')).text();
      assert.match(metrics, /function_failures_total\{[^}]*\} [1-9]/);
    });
  });

  describe(`an ES module app with HTTP streams and hooks ${how}`, () => {
    let folder;
    let runtime;
    before(async () => {
      folder = deployed('azure-v4-stream', { withLibrary });
      // The library's stream proxy listens without naming a host: kept on loopback here.
      runtime = await startRuntime({ HANDLER_FOLDER: folder, NODE_OPTIONS: `--import=${LOOPBACK}` });
    });
    after(async () => {
      await runtime?.stop();
      removeDeployed(folder);
    });

    it('loads every file package.json main matches, with no route prefix', async () => {
      // The library streams through its proxy (said at start-up); the stand-in in process: either way no Content-Length.
      if (withLibrary) assert.ok(runtime.records().some((record) => /^Azure Functions app: .*, HTTP streams on$/.test(record.message)), 'streams on');
      const response = await runtime.fetch('/countdown/3');
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('content-length'), null);
      assert.equal(response.headers.get('content-type'), 'text/plain');
      assert.equal(await response.text(), '3\n2\n1\n0\n');
    });

    it('reads a request body as a stream', async () => {
      const response = await runtime.fetch('/upload', { method: 'POST', body: 'x'.repeat(100_000), headers: { 'x-name': 'big' } });
      assert.deepEqual(await response.json(), { bytes: 100_000, hook: 'none', name: 'big' });
    });

    it('runs the invocation hooks around the function', async () => {
      const response = await runtime.fetch('/recovers');
      assert.deepEqual([response.status, await response.text()], [203, 'recovered after recovers']);
    });

    it("answers the host's empty 200 when a function returns nothing", async () => {
      const response = await runtime.fetch('/nothing');
      assert.deepEqual([response.status, await response.text()], [200, '']);
    });
  });
}

describe('start-up errors name the app file and what was expected', () => {
  for (const [what, files, expected] of [
    ['no package.json', { 'host.json': '{}' }, null],
    ['no main', { 'host.json': '{}', 'package.json': '{"name": "a"}' }, /package\.json has no "main": an Azure Functions Node\.js app names its function files there/],
    ['main matching nothing', { 'host.json': '{}', 'package.json': '{"main": "src/functions/*.js"}' }, /package\.json "main" 'src\/functions\/\*\.js' in .* matches no file/],
    ['no function registered', { 'host.json': '{}', 'package.json': '{"main": "index.js"}', 'index.js': 'module.exports = {};' }, /index\.js registered no function: expected app\.http\('name', \{ handler \}\)/],
    ['a route it cannot match', { 'host.json': '{}', 'package.json': '{"main": "index.js"}', 'index.js': "require('@azure/functions').app.get('a', { route: 'a/{x:regex(1)}', handler: () => ({}) });" }, /route template 'a\/\{x:regex\(1\)\}' uses the constraint 'regex'/],
  ]) {
    it(what, async (t) => {
      const folder = (await import('node:fs')).mkdtempSync('/tmp/nodejs26-azure-bad-');
      t.after(() => removeDeployed(folder));
      for (const [name, text] of Object.entries(files)) (await import('node:fs')).writeFileSync(`${folder}/${name}`, text);
      const { code, stderr } = await runToExit({ FUNCTIONS_WORKER_RUNTIME: 'node', HANDLER_FOLDER: folder });
      assert.equal(code, 2);
      assert.equal(stderr.trim().split('\n').length, 1, stderr);
      assert.match(stderr, expected ?? /no package\.json in .*: an Azure Functions Node\.js app names its function files in package\.json "main"/);
    });
  }
});
