// Fission's Node.js environment (lib/platforms/fission.js): start empty,
// specialise, then serve fn(context). The same cases run against Fission's own
// environment (fission/environments nodejs/server.js with its npm dependencies)
// when FISSION_NODEJS_ENV names a folder holding it, or .tools/fission-nodejs-env
// does: the expected answers are the ones it gives (docs/migration-fission-nodejs.md).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { freePort, functions, ROOT, startRuntime } from '../helpers.js';

const REAL = process.env.FISSION_NODEJS_ENV ?? path.join(ROOT, '..', '.tools', 'fission-nodejs-env');
const realPresent = fs.existsSync(path.join(REAL, 'server.js')) && fs.existsSync(path.join(REAL, 'node_modules', 'express'));

/** The volume as the fetcher fills it, outside this repository (no package.json of ours above it). */
function makeVolume() {
  const volume = fs.mkdtempSync(path.join(os.tmpdir(), 'userfunc-'));
  fs.copyFileSync(path.join(functions('fission-hello'), 'hello.js'), path.join(volume, 'user'));
  for (const folder of ['fission-samples', 'fission-cases']) fs.cpSync(functions(folder), path.join(volume, folder), { recursive: true });
  return volume;
}

/** Fission's own environment on a free port, as its image starts it (`node server.js --port P --codepath ...`). */
async function startReal(volume) {
  const port = await freePort();
  const child = spawn(process.execPath, ['server.js', '--port', String(port), '--codepath', path.join(volume, 'user')], { cwd: REAL, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk) => { output += chunk; });
  child.stderr.on('data', (chunk) => { output += chunk; });
  const deadline = Date.now() + 15_000;
  for (;;) {
    try {
      await (await fetch(`http://127.0.0.1:${port}/`)).arrayBuffer();
      break;
    } catch {
      if (Date.now() > deadline) throw new Error(`Fission's environment did not answer: ${output}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }
  return { fetch: (target, init) => fetch(`http://127.0.0.1:${port}${target}`, init), stop: () => child.kill('SIGTERM'), output: () => output };
}

const startOurs = async (volume) => startRuntime({ USERFUNCVOL: volume });

const TEXT_HTML = 'text/html; charset=utf-8';
const JSON_UTF8 = 'application/json; charset=utf-8';
const v2 = (filepath, functionName) => ['POST', '/v2/specialize', { body: JSON.stringify({ filepath, functionName }), headers: { 'content-type': 'application/json' } }];

/** Each group: how the server is specialised, then [method, target, init, [status, content type, body]]. */
const GROUPS = [
  {
    name: 'v1: /specialize loads /userfunc/user',
    specialise: () => ['POST', '/specialize', {}],
    calls: [['GET', '/', {}, [200, TEXT_HTML, 'hello, world!\n']], ['POST', '/any/path', { body: 'x' }, [200, TEXT_HTML, 'hello, world!\n']]],
  },
  {
    name: "v2: a folder's index.answers",
    specialise: (volume) => v2(path.join(volume, 'fission-cases'), 'index.answers'),
    calls: [
      ['POST', '/v2/specialize', { body: '{}', headers: { 'content-type': 'application/json' } }, [400, TEXT_HTML, 'Not a generic container']],
      ['GET', '/text', {}, [200, TEXT_HTML, 'plain']],
      ['GET', '/typed', {}, [201, 'text/plain; charset=utf-8', 'typed']],
      ['GET', '/object', {}, [200, JSON_UTF8, '{"a":1,"list":[1,"two"]}']],
      ['GET', '/number', {}, [200, JSON_UTF8, '42']],
      ['GET', '/buffer', {}, [200, 'application/octet-stream', 'bytes']],
      ['GET', '/empty', {}, [204, null, '']],
      ['GET', '/json-typed', {}, [200, JSON_UTF8, '{"ok":true}']],
      ['GET', '/stream', {}, [200, 'text/plain; charset=utf-8', 'abc']],
      ['GET', '/fail', {}, [500, TEXT_HTML, 'Internal server error']],
      ['PUT', '/users/7?a=1&a=2', { body: '{"n":1}', headers: { 'content-type': 'application/json', 'X-Fission-Params-Id': '7' } },
        [200, JSON_UTF8, '{"method":"PUT","url":"/users/7?a=1&a=2","body":{"n":1},"query":{"a":["1","2"]},"param":"7","params":{}}']],
      ['POST', '/f', { body: 'x=1&x=2&y=z', headers: { 'content-type': 'application/x-www-form-urlencoded' } },
        [200, JSON_UTF8, '{"method":"POST","url":"/f","body":{"x":["1","2"],"y":"z"},"query":{},"param":null,"params":{}}']],
      ['POST', '/t', { body: 'some text', headers: { 'content-type': 'text/plain' } }, [200, JSON_UTF8, '{"method":"POST","url":"/t","body":"some text","query":{},"param":null,"params":{}}']],
      ['POST', '/b', { body: 'raw', headers: { 'content-type': 'application/octet-stream' } },
        [200, JSON_UTF8, '{"method":"POST","url":"/b","body":{"type":"Buffer","data":[114,97,119]},"query":{},"param":null,"params":{}}']],
      ['POST', '/i', { body: 'raw', headers: { 'content-type': 'image/png' } }, [200, JSON_UTF8, '{"method":"POST","url":"/i","body":null,"query":{},"param":null,"params":{}}']],
    ],
  },
  {
    name: 'v2: a single CommonJS file, its default export',
    specialise: (volume) => v2(path.join(volume, 'fission-samples', 'wordCount.js'), ''),
    calls: [['POST', '/', { body: 'one two three', headers: { 'content-type': 'text/plain' } }, [200, JSON_UTF8, '{"wordCount":3,"words":["one","two","three"],"moduleType":"CJS"}']]],
  },
  {
    name: 'v2: an ES module named by its file, its default export',
    specialise: (volume) => v2(path.join(volume, 'fission-samples'), 'helloUser'),
    calls: [['GET', '/?user=ann', {}, [200, 'text/plain; charset=utf-8', 'hello ann from ESM Node.js 22! 🚀\n']]],
  },
  {
    name: 'v2: fn(context, callback)',
    specialise: (volume) => v2(path.join(volume, 'fission-cases'), 'index.callback'),
    calls: [['GET', '/?name=bo', {}, [200, TEXT_HTML, 'called back for bo']]],
  },
  {
    name: 'v2: fn() with no arguments',
    specialise: (volume) => v2(path.join(volume, 'fission-cases'), 'index.noArguments'),
    calls: [['GET', '/', {}, [200, TEXT_HTML, 'no arguments']]],
  },
  {
    name: 'v2: a file that is not there',
    specialise: (volume) => v2(path.join(volume, 'nowhere.js'), ''),
    specialised: 500,
    calls: [['GET', '/', {}, [500, TEXT_HTML, 'Generic container: no requests supported']]],
  },
];

async function exchange(server, [method, target, init]) {
  const response = await server.fetch(target, { method, ...init });
  return [response.status, response.headers.get('content-type'), await response.text()];
}

function runGroups(label, start, { skip } = {}) {
  describe(label, { skip }, () => {
    let volume;
    before(() => { volume = makeVolume(); });
    after(() => fs.rmSync(volume, { recursive: true, force: true }));
    it('answers 500 before it is specialised', async () => {
      const server = await start(volume);
      try {
        assert.deepEqual(await exchange(server, ['GET', '/', {}]), [500, TEXT_HTML, 'Generic container: no requests supported']);
      } finally {
        await server.stop();
      }
    });
    for (const group of GROUPS) {
      it(group.name, async () => {
        const server = await start(volume);
        try {
          const [status] = await exchange(server, group.specialise(volume));
          assert.equal(status, group.specialised ?? 202);
          for (const call of group.calls) assert.deepEqual(await exchange(server, call), call[3], `${call[0]} ${call[1]}`);
        } finally {
          await server.stop();
        }
      });
    }
  });
}

runGroups('nodejs26 as a Fission Node.js environment', startOurs);
runGroups("Fission's own Node.js environment gives the same answers", startReal, { skip: realPresent ? false : `no Fission Node.js environment at ${REAL} (set FISSION_NODEJS_ENV)` });

describe('what nodejs26 does where the environment would leak or hang', () => {
  let volume;
  let runtime;
  before(async () => {
    volume = makeVolume();
    runtime = await startRuntime({ USERFUNCVOL: volume, SERVER_CALL_TIMEOUT: '1' });
    const [status] = await exchange(runtime, v2(path.join(volume, 'fission-cases'), 'index.answers'));
    assert.equal(status, 202);
  });
  after(async () => { await runtime.stop(); fs.rmSync(volume, { recursive: true, force: true }); });

  it('answers a malformed or non-object JSON body 400 without a stack', async () => {
    for (const body of ['{bad', '"str"']) {
      const [status, , text] = await exchange(runtime, ['POST', '/', { body, headers: { 'content-type': 'application/json' } }]);
      assert.deepEqual([status, text], [400, 'Bad Request: The request body is not valid JSON.']);
    }
  });

  it('logs a failure and never sends it', async () => {
    assert.ok(!(await exchange(runtime, ['GET', '/fail', {}]))[2].includes('hunter2'));
    await runtime.waitFor((r) => r.stdout.includes('the database password is hunter2'), 'the error in the log');
  });

  it('answers a result without a status at the call timeout (the environment never answers)', async () => {
    assert.equal((await exchange(runtime, ['GET', '/not-an-object', {}]))[0], 408);
  });

  it('keeps the probes and metrics', async () => {
    assert.equal((await runtime.fetch('/health/readiness')).status, 200);
    assert.match(await (await runtime.fetch('/metrics')).text(), /function_calls_total\{method="PUT"\}|function_calls_total\{method="GET"\}/);
  });
});

describe('specialising is no call', () => {
  let runtime;
  before(async () => { runtime = await startRuntime({ USERFUNCVOL: functions('fission-slow'), SERVER_CALL_TIMEOUT: '1', SERVER_MAX_BODY_SIZE: '1000' }); });
  after(async () => { await runtime.stop(); });

  it('loads a module that outlasts the call timeout, and neither times nor counts it', async () => {
    const [status] = await exchange(runtime, v2(path.join(functions('fission-slow'), 'index.mjs'), ''));
    assert.equal(status, 202);
    assert.deepEqual(await exchange(runtime, ['GET', '/', {}]), [200, TEXT_HTML, 'loaded slowly']);
    const metrics = await (await runtime.fetch('/metrics')).text();
    assert.match(metrics, /function_calls_total\{method="GET"\} 1\n/);
    assert.match(metrics, /function_calls_total\{method="POST"\} 0\n/);
  });

  it("refuses a specialise call's body past SERVER_MAX_BODY_SIZE", async () => {
    const body = `{${' '.repeat(1000)}}`;
    assert.deepEqual(await exchange(runtime, ['POST', '/v2/specialize', { body }]), [413, 'text/plain; charset=utf-8', 'Request Entity Too Large: the request body is larger than 1000 bytes']);
  });
});

describe('recognising Fission', () => {
  it('listens on the environment port 8888 unless SERVER_PORT is set', async () => {
    const { resolve } = await import('../../lib/platforms/index.js');
    const { fromEnv } = await import('../../lib/config.js');
    assert.equal((await resolve(fromEnv({ USERFUNCVOL: '/tmp' }))).config.serverPort, 8888);
    assert.equal((await resolve(fromEnv({ USERFUNCVOL: '/tmp', SERVER_PORT: '9000' }))).config.serverPort, 9000);
  });

  it('specialises at start-up when HANDLER_FUNCTION_NAME names the function', async () => {
    const volume = makeVolume();
    const runtime = await startRuntime({ USERFUNCVOL: volume, HANDLER_FOLDER: path.join(volume, 'fission-cases'), HANDLER_MODULE_NAME: 'index', HANDLER_FUNCTION_NAME: 'noArguments' });
    try {
      assert.deepEqual(await exchange(runtime, ['GET', '/', {}]), [200, TEXT_HTML, 'no arguments']);
      assert.equal((await exchange(runtime, ['POST', '/specialize', {}]))[0], 400);
    } finally {
      await runtime.stop();
      fs.rmSync(volume, { recursive: true, force: true });
    }
  });
});
