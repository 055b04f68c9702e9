// AWS Lambda's Node.js functions served unchanged (lib/platforms/aws-lambda.js):
// the handler string, .js/.mjs/.cjs, async and callback handlers, the context,
// the SAM template's routes and payload format, results turned into HTTP, errors.
import assert from 'node:assert/strict';
import http from 'node:http';
import http2 from 'node:http2';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { functions, runToExit, startRuntime } from '../helpers.js';
import { deployed, removeDeployed } from './libraries.js';

const json = async (response) => JSON.parse(await response.text());

describe('payload format 2.0 (function URL, HTTP API), _HANDLER=index.handler', () => {
  let runtime;
  before(async () => {
    runtime = await startRuntime({ _HANDLER: 'index.handler', LAMBDA_TASK_ROOT: functions('aws-lambda-http'), AWS_LAMBDA_FUNCTION_NAME: 'orders', AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '512', SERVER_CALL_TIMEOUT: '30' });
  });
  after(() => runtime.stop());

  it('says which contract it calls, after the import line', () => {
    const lines = runtime.stdout.split('\n');
    assert.equal(lines[0], `Importing function sources from ${functions('aws-lambda-http')}/index.mjs:handler`);
    assert.equal(lines[1], 'Calling it with the aws-lambda contract (HANDLER_PLATFORM chooses another)');
  });

  it('sends the 2.0 event: lower-case headers, cookies apart, joined query values', async () => {
    const response = await runtime.fetch('/orders/7?a=1&a=2&b=x', { method: 'POST', body: '{"n": 1}', headers: { 'Content-Type': 'application/json', 'X-Custom': 'v', Cookie: 'c1=v1; c2=v2' } });
    assert.equal(response.status, 200);
    const { event, body } = await json(response);
    assert.equal(event.version, '2.0');
    assert.equal(event.routeKey, '$default');
    assert.equal(event.rawPath, '/orders/7');
    assert.equal(event.rawQueryString, 'a=1&a=2&b=x');
    assert.deepEqual(event.queryStringParameters, { a: '1,2', b: 'x' });
    assert.deepEqual(event.cookies, ['c1=v1', 'c2=v2']);
    assert.equal(event.headers['x-custom'], 'v');
    assert.equal(event.headers.cookie, undefined);
    assert.ok(Object.keys(event.headers).every((name) => name === name.toLowerCase()));
    assert.deepEqual([event.requestContext.http.method, event.requestContext.http.path, event.requestContext.http.sourceIp], ['POST', '/orders/7', '127.0.0.1']);
    assert.equal(event.requestContext.stage, '$default');
    assert.equal(event.isBase64Encoded, false);
    assert.equal(body, '{"n": 1}');
  });

  it('base64-encodes a binary request body', async () => {
    const { event, body } = await json(await runtime.fetch('/', { method: 'POST', body: Buffer.from([0, 0xff, 0x62]), headers: { 'Content-Type': 'application/octet-stream' } }));
    assert.equal(event.isBase64Encoded, true);
    assert.equal(body, '00ff62');
  });

  for (const [target, status, type, body] of [
    ['/plain', 200, 'application/json', '{"hello":"world"}'],
    ['/text', 200, 'application/json', '"just a string"'],
    ['/unicode', 200, 'application/json', '{"name":"Zoë"}'],
    ['/number', 200, 'application/json', '42'],
    ['/list', 200, 'application/json', '[1,"two",null]'],
    ['/none', 200, 'application/json', 'null'],
    ['/bigint', 500, 'application/json', '{"message":"Internal Server Error"}'],
    ['/cookies', 201, 'application/json', 'set'],
    ['/fail', 500, 'application/json', '{"message":"Internal Server Error"}'],
    ['/reject', 500, 'application/json', '{"message":"Internal Server Error"}'],
  ]) {
    it(`turns ${target}'s result into ${status} ${body}`, async () => {
      const response = await runtime.fetch(target);
      assert.deepEqual([response.status, response.headers.get('content-type'), await response.text()], [status, type, body]);
    });
  }

  it('decodes a base64 response body', async () => {
    const response = await runtime.fetch('/binary');
    assert.equal(response.headers.get('content-type'), 'image/png');
    assert.deepEqual([...new Uint8Array(await response.arrayBuffer())], [0x89, 0x50, 0x4e, 0x47, 0x00, 0xff]);
  });

  it('sends cookies as Set-Cookie fields, one each', async () => {
    const response = await runtime.fetch('/cookies');
    assert.deepEqual(response.headers.getSetCookie(), ['a=1; Path=/', 'b=2']);
  });

  it('sends no body with a 204', async () => {
    const response = await runtime.fetch('/no-content');
    assert.deepEqual([response.status, await response.text()], [204, '']);
  });

  it('logs the error and never sends it', async () => {
    const response = await runtime.fetch('/fail');
    assert.ok(!(await response.text()).includes('hunter2'));
    await runtime.waitFor((r) => r.stdout.includes('the database password is hunter2'), 'the error in the log');
  });

  it('gives the context the Lambda runtime gives', async () => {
    const got = await json(await runtime.fetch('/remaining', { headers: { 'X-Request-Id': '0123456789abcdef0123456789abcdef' } }));
    assert.ok(got.first > 28000 && got.first <= 30000, String(got.first));
    assert.deepEqual([got.name, got.version, got.memory, got.group, got.waits], ['orders', '$LATEST', '512', '/aws/lambda/orders', true]);
    assert.equal(got.arn, 'arn:aws:lambda:us-east-1:123456789012:function:orders');
    assert.equal(got.id, '01234567-89ab-cdef-0123-456789abcdef');
    assert.match(got.stream, /^\d{4}\/\d{2}\/\d{2}\/\[\$LATEST\][0-9a-f]{32}$/);
  });

  it('still answers the probes and counts the calls', async () => {
    assert.equal((await runtime.fetch('/health/readiness')).status, 200);
    const metrics = await (await runtime.fetch('/metrics')).text();
    assert.match(metrics, /function_calls_total\{method="GET"\} \d+/);
  });
});

describe('payload format 1.0 (REST API)', () => {
  let runtime;
  before(async () => {
    runtime = await startRuntime({ _HANDLER: 'index.handler', LAMBDA_TASK_ROOT: functions('aws-lambda-http'), LAMBDA_PAYLOAD_FORMAT: '1.0' });
  });
  after(() => runtime.stop());

  it('sends the 1.0 event: single and multi values, the proxy resource', async () => {
    const { event, body } = await json(await runtime.fetch('/a/b?x=1&x=2', { headers: { 'X-Custom': 'v' } }));
    assert.deepEqual([event.httpMethod, event.path, event.resource], ['GET', '/a/b', '/{proxy+}']);
    assert.deepEqual(event.pathParameters, { proxy: 'a/b' });
    assert.deepEqual(event.queryStringParameters, { x: '2' });
    assert.deepEqual(event.multiValueQueryStringParameters, { x: ['1', '2'] });
    assert.equal(event.headers['X-Custom'], 'v');
    assert.deepEqual(event.multiValueHeaders['X-Custom'], ['v']);
    assert.equal(body, null);
  });

  it('merges multiValueHeaders and headers', async () => {
    const response = await runtime.fetch('/multi');
    assert.equal(response.headers.get('x-many'), 'one, two, three');
    assert.equal(response.headers.get('x-one'), '1');
  });

  for (const target of ['/fail', '/bad', '/plain']) {
    it(`answers ${target} with the REST API's 502`, async () => {
      const response = await runtime.fetch(target);
      assert.deepEqual([response.status, await response.text()], [502, '{"message": "Internal server error"}']);
    });
  }
});

describe("`sam init`'s hello world: nothing set but the folder", () => {
  let runtime;
  before(async () => { runtime = await startRuntime({ HANDLER_FOLDER: functions('aws-lambda-sam') }); });
  after(() => runtime.stop());

  it('serves the template\'s route with the 1.0 event', async () => {
    const response = await runtime.fetch('/hello');
    assert.deepEqual([response.status, await response.text()], [200, '{"message":"hello world"}']);
  });

  it("answers what the REST API has no route for as it does", async () => {
    for (const [method, target] of [['GET', '/nowhere'], ['POST', '/hello']]) {
      const response = await runtime.fetch(target, { method });
      assert.deepEqual([response.status, await response.text()], [403, '{"message":"Missing Authentication Token"}']);
    }
  });
});

describe('an HTTP API from the template: routes, path parameters, greedy paths', () => {
  let runtime;
  before(async () => { runtime = await startRuntime({ HANDLER_FOLDER: functions('aws-lambda-httpapi') }); });
  after(() => runtime.stop());

  it('gives routeKey, pathParameters and cookies', async () => {
    const got = await json(await runtime.fetch('/orders/42?tag=a', { headers: { Cookie: 'session=s1' } }));
    assert.deepEqual(got, { routeKey: 'GET /orders/{id}', pathParameters: { id: '42' }, cookies: ['session=s1'], query: { tag: 'a' }, memory: '256', remaining: got.remaining });
    assert.ok(got.remaining > 0 && got.remaining <= 10000, String(got.remaining)); // the template's Timeout: 10
  });

  it('matches a greedy path for any method', async () => {
    const got = await json(await runtime.fetch('/files/a/b/c.txt', { method: 'DELETE' }));
    assert.deepEqual([got.routeKey, got.pathParameters], ['ANY /files/{proxy+}', { proxy: 'a/b/c.txt' }]);
  });

  it("answers what the HTTP API has no route for as it does", async () => {
    for (const [method, target] of [['GET', '/nowhere'], ['POST', '/orders/1']]) {
      const response = await runtime.fetch(target, { method });
      assert.deepEqual([response.status, await response.text()], [404, '{"message":"Not Found"}']);
    }
  });
});

describe('module kinds and handler shapes', () => {
  it('loads a .js ES module where package.json says "type": "module"', async () => {
    const runtime = await startRuntime({ _HANDLER: 'app.handler', LAMBDA_TASK_ROOT: functions('aws-lambda-esm-js') });
    try {
      assert.equal(await (await runtime.fetch('/')).text(), '"Hello from Lambda!"');
    } finally {
      await runtime.stop();
    }
  });

  it('loads a .cjs module and a nested export', async () => {
    const runtime = await startRuntime({ _HANDLER: 'handler.api.get', LAMBDA_TASK_ROOT: functions('aws-lambda-cjs') });
    try {
      assert.equal(await (await runtime.fetch('/', { method: 'PUT' })).text(), 'cjs PUT');
    } finally {
      await runtime.stop();
    }
  });

  for (const executionEnv of [undefined, 'AWS_Lambda_nodejs20.x', 'AWS_Lambda_nodejs22.x']) {
    it(`answers a callback handler from its callback (AWS_EXECUTION_ENV=${executionEnv})`, async () => {
      const runtime = await startRuntime({ _HANDLER: 'index.handler', LAMBDA_TASK_ROOT: functions('aws-lambda-callback'), ...(executionEnv ? { AWS_EXECUTION_ENV: executionEnv } : {}) });
      try {
        const later = await runtime.fetch('/later?name=ann');
        assert.deepEqual([later.status, later.headers.get('content-type'), await later.text()], [200, 'text/plain', 'later for ann']);
        assert.equal(await (await runtime.fetch('/succeed')).text(), 'succeeded');
        const failed = await runtime.fetch('/error');
        assert.deepEqual([failed.status, await failed.text()], [500, '{"message":"Internal Server Error"}']);
      } finally {
        await runtime.stop();
      }
    });
  }

  for (const [executionEnv, body] of [['AWS_Lambda_nodejs22.x', 'null'], ['AWS_Lambda_nodejs24.x', 'returned'], [undefined, 'returned']]) {
    it(`answers a plain return with ${body} (AWS_EXECUTION_ENV=${executionEnv})`, async () => {
      const runtime = await startRuntime({ _HANDLER: 'index.returnsPlainly', LAMBDA_TASK_ROOT: functions('aws-lambda-callback'), ...(executionEnv ? { AWS_EXECUTION_ENV: executionEnv } : {}) });
      try {
        assert.equal(await (await runtime.fetch('/')).text(), body);
      } finally {
        await runtime.stop();
      }
    });
  }

  it('refuses a callback handler on nodejs24.x, as Lambda does', async () => {
    const { code, stderr } = await runToExit({ _HANDLER: 'index.handler', LAMBDA_TASK_ROOT: functions('aws-lambda-callback'), AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x' });
    assert.equal(code, 2);
    assert.equal(stderr, `funcwsgi: error: handler() in ${path.join(functions('aws-lambda-callback'), 'index.js')} takes a callback (event, context, callback), which AWS Lambda no longer calls from nodejs24.x on (AWS_EXECUTION_ENV=AWS_Lambda_nodejs24.x): make it an async function that returns its result\n`);
  });

  it('names what the module exports when the handler is not there', async () => {
    const { code, stderr } = await runToExit({ _HANDLER: 'index.nope', LAMBDA_TASK_ROOT: functions('aws-lambda-http') });
    assert.equal(code, 2);
    assert.equal(stderr, `funcwsgi: error: no function 'nope' in ${functions('aws-lambda-http')}/index.mjs; found: handler\n`);
  });
});

describe("Powertools for AWS Lambda's parser accepts the events (its own API Gateway schemas)", () => {
  const deployments = [];
  after(() => { for (const folder of deployments) removeDeployed(folder); });

  for (const format of ['2.0', '1.0']) {
    it(`with the library in node_modules: payload ${format} passes the schema`, async () => {
      const folder = deployed('aws-lambda-powertools', { withLibrary: true });
      deployments.push(folder);
      const runtime = await startRuntime({ _HANDLER: 'index.handler', LAMBDA_TASK_ROOT: folder, LAMBDA_PAYLOAD_FORMAT: format });
      try {
        for (const [target, init] of [['/a/b?x=1&x=2', { method: 'POST', body: '{"n":1}', headers: { 'content-type': 'application/json', cookie: 'a=1; b=2' } }], ['/', {}], ['/bin', { method: 'PUT', body: Buffer.from([0, 0xff]), headers: { 'content-type': 'application/octet-stream' } }]]) {
          const response = await runtime.fetch(target, init);
          const got = await json(response);
          assert.equal(response.status, 200, JSON.stringify(got));
          assert.equal(got.version, format);
        }
      } finally {
        await runtime.stop();
      }
    });
  }

  it('without it, start-up stops with one line naming the package', async () => {
    const folder = deployed('aws-lambda-powertools', { withLibrary: false });
    deployments.push(folder);
    const { code, stderr } = await runToExit({ _HANDLER: 'index.handler', LAMBDA_TASK_ROOT: folder });
    assert.equal(code, 2);
    assert.match(stderr.split('\n')[0], /^funcwsgi: error: .*index\.mjs failed to import '@aws-lambda-powertools\/parser'.*is it in the function's package\.json dependencies\?$/);
  });
});

describe('tracing reaches a Lambda handler', () => {
  let collector;
  let next;
  let runtime;
  const listen = (server) => new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server.address().port)));
  before(async () => {
    collector = http.createServer((req, res) => { req.resume(); req.on('end', () => res.writeHead(200).end()); });
    next = http.createServer((req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ traceparent: req.headers.traceparent ?? null })));
    const collectorPort = await listen(collector);
    await listen(next);
    runtime = await startRuntime({ _HANDLER: 'index.handler', LAMBDA_TASK_ROOT: functions('aws-lambda-traced'), TRACE_COLLECTOR_ENDPOINT: `http://127.0.0.1:${collectorPort}/v1/traces` });
  });
  after(async () => {
    await runtime?.stop();
    collector?.close();
    next?.close();
  });

  it("continues the caller's trace into the handler's outgoing fetch()", async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const target = `/?next=${encodeURIComponent(`http://127.0.0.1:${next.address().port}/`)}`;
    const got = await json(await runtime.fetch(target, { headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` } }));
    assert.match(got.traceparent, new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
  });
});

describe('over HTTP/2 (h2c)', () => {
  it('gives the 2.0 event the Host :authority names, and the front\'s answers', async () => {
    const runtime = await startRuntime({ _HANDLER: 'index.handler', LAMBDA_TASK_ROOT: functions('aws-lambda-http'), SERVER_HTTP2: 'true' });
    const session = http2.connect(runtime.url);
    const request = (target, headers = {}) => new Promise((resolve, reject) => {
      const stream = session.request({ ':path': target, ...headers });
      const chunks = [];
      let status;
      stream.on('response', (head) => { status = head[':status']; });
      stream.on('data', (chunk) => chunks.push(chunk));
      stream.on('end', () => resolve([status, Buffer.concat(chunks).toString()]));
      stream.on('error', reject);
      stream.end();
    });
    try {
      const [status, body] = await request('/h2?x=1', { cookie: 'a=1' });
      assert.equal(status, 200);
      const { event } = JSON.parse(body);
      assert.equal(event.headers.host, `127.0.0.1:${runtime.port}`);
      assert.deepEqual(event.cookies, ['a=1']);
      assert.equal(event.requestContext.http.protocol, 'HTTP/2.0');
      assert.deepEqual(await request('/fail'), [500, '{"message":"Internal Server Error"}']);
    } finally {
      session.close();
      await runtime.stop();
    }
  });
});

describe('a Lambda signal with nothing naming the handler', () => {
  it('stops start-up with one line saying what to set', async () => {
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'lambda-empty-'));
    try {
      const { code, stderr } = await runToExit({ AWS_LAMBDA_FUNCTION_NAME: 'orders', HANDLER_FOLDER: empty });
      assert.equal(code, 2);
      assert.equal(stderr, `funcwsgi: error: the function is AWS Lambda's (AWS_LAMBDA_FUNCTION_NAME=orders), but nothing names its handler: set _HANDLER (such as index.handler), or put a template.yaml or index.mjs in ${empty}\n`);
    } finally {
      fs.rmSync(empty, { recursive: true, force: true });
    }
  });
});
