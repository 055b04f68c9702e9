// Google's Functions Framework for Node.js on nodejs26 (lib/platforms/functions-framework.js):
// Google's sample functions laid out as Cloud Run functions deploys them, with the framework
// in node_modules (its own http() and cloudEvent() registering) and without it (the runtime's
// stand-in); and the framework itself, run from npm as Cloud Run runs it (NODE_ENV=production),
// answering the same requests the same way.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fromEnv } from '../../lib/config.js';
import { recognise, resolve } from '../../lib/platforms/index.js';
import { freePort, functions, runToExit, startRuntime } from '../helpers.js';
import { deployed, installed, removeDeployed } from './libraries.js';

const LOOPBACK = new URL('./loopback.js', import.meta.url).pathname;
const nowhere = { HANDLER_FOLDER: '/nonexistent' };

describe('recognising a Functions Framework function', () => {
  for (const [environ, platform] of [
    [{ FUNCTION_TARGET: 'helloHttp' }, 'functions-framework'],
    [{ FUNCTION_SIGNATURE_TYPE: 'cloudevent' }, 'functions-framework'],
    [{ HANDLER_FOLDER: functions('gcf-http') }, 'functions-framework'],
    [{ FUNCTION_TARGET: 'main', HANDLER_FOLDER: functions('paths') }, 'funcwsgi'],
    [{ FUNCTION_TARGET: 'helloHttp', HANDLER_MODULE_NAME: 'index' }, 'funcwsgi'],
    [{ FUNCTION_TARGET: 'helloHttp', HANDLER_PLATFORM: 'funcwsgi' }, 'funcwsgi'],
  ]) {
    it(`${JSON.stringify(environ)} -> ${platform}`, async () => {
      assert.equal((await recognise(fromEnv({ ...nowhere, ...environ }))).platform, platform);
    });
  }

  it('refuses a signature type the framework for Node.js does not have', () => {
    assert.throws(() => fromEnv({ FUNCTION_SIGNATURE_TYPE: 'typed' }), /FUNCTION_SIGNATURE_TYPE='typed' is invalid: expected one of http, cloudevent/);
  });
});

describe("the stand-in's API", () => {
  const names = (value) => Object.keys(value).sort();
  const library = (subpath = '') => createRequire(path.join(installed('gcf-http'), 'noop.js'))(`@google-cloud/functions-framework${subpath}`);

  it('exports what the installed framework exports, /testing included', async () => {
    assert.deepEqual(names(await import('../../lib/platforms/functions-framework/framework.js')), names(library()));
    assert.deepEqual(names(await import('../../lib/platforms/functions-framework/testing.js')), names(library('/testing')));
  });

  it("refuses a name the framework refuses, with the framework's words", async () => {
    const standIn = await import('../../lib/platforms/functions-framework/framework.js');
    assert.throws(() => standIn.http('1st', () => {}), { message: 'Invalid function name: 1st' });
    assert.throws(() => library().http('1st', () => {}), { message: 'Invalid function name: 1st' });
  });

  it("serves a registered function from getTestServer() as the runtime calls it", async (t) => {
    const standIn = await import('../../lib/platforms/functions-framework/framework.js');
    const { getTestServer } = await import('../../lib/platforms/functions-framework/testing.js');
    standIn.http('testServed', (req, res) => res.status(201).send(`served ${req.query.name}`));
    const server = getTestServer('testServed');
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.after(() => new Promise((resolve) => server.close(resolve)));
    const response = await fetch(`http://127.0.0.1:${server.address().port}/any?name=x`);
    assert.deepEqual([response.status, await response.text()], [201, 'served x']);
    assert.throws(() => getTestServer('nothing'), /The provided function "nothing" was not registered/);
  });
});

describe('FUNCTION_TARGET, when the framework is recognised', () => {
  const located = async (environ) => (await resolve(fromEnv({ HANDLER_FOLDER: functions('gcf-http'), ...environ }))).config;

  it("names the registered function, in package.json main's module", async () => {
    const c = await located({ FUNCTION_TARGET: 'hello-json' });
    assert.deepEqual([c.handlerModuleName, c.handlerFunctionName], ['index.js', 'hello-json']);
  });

  it('walks nested exports when it has dots', async () => {
    assert.equal((await located({ FUNCTION_TARGET: 'nested.greeter' })).handlerFunctionName, 'nested.greeter');
  });

  it("is, unset, the --target of package.json's start script, else the framework's default 'function'", async () => {
    assert.equal((await located({})).handlerFunctionName, 'helloHttp');
    assert.equal((await resolve(fromEnv({ HANDLER_FOLDER: functions('gcf-esm') }))).config.handlerFunctionName, 'function');
  });

  it('gives way to HANDLER_FUNCTION_NAME', async () => {
    assert.equal((await located({ FUNCTION_TARGET: 'helloHttp', HANDLER_FUNCTION_NAME: 'helloGET' })).handlerFunctionName, 'helloGET');
  });

  it('finds main under src/ for an ES module package', async () => {
    const c = (await resolve(fromEnv({ HANDLER_FOLDER: functions('gcf-esm'), FUNCTION_TARGET: 'helloESM' }))).config;
    assert.equal(c.handlerModuleName, path.join('src', 'index.js'));
  });

  it('names what the module offers when the target is neither registered nor exported', async () => {
    const folder = deployed('gcf-http', { withLibrary: false });
    after(() => removeDeployed(folder));
    const { code, stderr } = await runToExit({ HANDLER_FOLDER: folder, FUNCTION_TARGET: 'helloHtp' });
    assert.equal(code, 2);
    assert.match(stderr, /^funcwsgi: error: no function 'helloHtp' in .*index\.js, neither registered with @google-cloud\/functions-framework's http\(\) or cloudEvent\(\) nor exported; found: helloWorld, logEvent\n$/);
  });
});

/** The requests each target is asked, and what the test checks beyond what the framework itself answers. */
const BINARY_EVENT = { 'ce-id': '1', 'ce-type': 'google.cloud.pubsub.topic.v1.messagePublished', 'ce-source': '//pubsub.googleapis.com/projects/p/topics/t', 'ce-specversion': '1.0', 'content-type': 'application/json' };
const STRUCTURED_EVENT = { specversion: '1.0', id: '2', type: 'com.example.test', source: '/tests', data: { hello: 'world' } };
const CASES = {
  helloHttp: [['GET', '/?name=Cloud'], ['POST', '/any/path', { 'content-type': 'application/json' }, '{"name":"JSON"}'], ['PUT', '/']],
  'hello-json': [['POST', '/deep/path?a=1&a=2', { 'content-type': 'application/json' }, '{"x":1}'], ['DELETE', '/']],
  fails: [['GET', '/']],
  rejects: [['POST', '/', { 'content-type': 'text/plain' }, 'x']],
  helloPubSub: [['POST', '/', BINARY_EVENT, JSON.stringify({ message: { data: Buffer.from('you').toString('base64') } })]],
  echoEvent: [['POST', '/', { 'content-type': 'application/cloudevents+json' }, JSON.stringify(STRUCTURED_EVENT)], ['POST', '/', BINARY_EVENT, '{"n":1}']],
  eventFails: [['POST', '/', BINARY_EVENT, '{}']],
  logEvent: [['POST', '/', BINARY_EVENT, '{}']],
  helloWorld: [['GET', '/']],
  'nested.greeter': [['GET', '/']],
};
const SIGNATURE = { helloPubSub: 'cloudevent', echoEvent: 'cloudevent', eventFails: 'cloudevent', logEvent: 'cloudevent' };
/** The settings Cloud Run gives `target`: FUNCTION_TARGET, and FUNCTION_SIGNATURE_TYPE for an event function. */
const settingsOf = (folder, target) => ({ HANDLER_FOLDER: folder, FUNCTION_TARGET: target, ...(SIGNATURE[target] ? { FUNCTION_SIGNATURE_TYPE: SIGNATURE[target] } : {}) });

async function ask(base, [method, target, headers = {}, body]) {
  const response = await fetch(base + target, { method, headers, body });
  return { status: response.status, body: await response.text(), googleStatus: response.headers.get('x-google-status'), type: response.headers.get('content-type') };
}

/** The Functions Framework from npm, serving `target` from `folder` as Cloud Run runs it. */
async function startFramework(folder, target) {
  const port = await freePort();
  const main = path.join(installed('gcf-http'), '@google-cloud', 'functions-framework', 'build', 'src', 'main.js');
  const child = spawn(process.execPath, ['--import', LOOPBACK, main, `--target=${target}`, `--signature-type=${SIGNATURE[target] ?? 'http'}`, `--source=${folder}`], {
    env: { PATH: process.env.PATH, PORT: String(port), NODE_ENV: 'production' }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => { output += chunk; });
  child.stderr.on('data', (chunk) => { output += chunk; });
  const deadline = Date.now() + 15_000;
  for (;;) {
    try {
      await fetch(`http://127.0.0.1:${port}/robots.txt`);
      return { url: `http://127.0.0.1:${port}`, stop: () => new Promise((done) => { child.once('exit', done); child.kill('SIGTERM'); }) };
    } catch {
      if (Date.now() > deadline) throw new Error(`the Functions Framework did not answer: ${output}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
}

for (const withLibrary of [false, true]) {
  describe(`Google's samples ${withLibrary ? 'with @google-cloud/functions-framework installed' : 'without @google-cloud/functions-framework installed'}`, () => {
    let folder;
    const answers = {};
    before(async () => {
      folder = deployed('gcf-http', { withLibrary });
      for (const target of Object.keys(CASES)) {
        const runtime = await startRuntime(settingsOf(folder, target));
        try {
          answers[target] = [];
          for (const request of CASES[target]) answers[target].push(await ask(runtime.url, request));
        } finally {
          await runtime.stop();
        }
        answers[target].log = runtime.records(); // once stopped: a call's log line may follow its answer
      }
    });
    after(() => removeDeployed(folder));

    it('answers an HTTP function on every path and method, through Express-style res', () => {
      assert.deepEqual(answers.helloHttp.map((a) => [a.status, a.body]), [[200, 'Hello Cloud!'], [200, 'Hello JSON!'], [200, 'Hello World!']]);
      assert.deepEqual(JSON.parse(answers['hello-json'][0].body), { method: 'POST', path: '/deep/path', query: { a: ['1', '2'] }, body: { x: 1 } });
      assert.equal(answers['hello-json'][0].status, 201);
    });

    it('answers a throw or a rejection as the framework in production: a plain 500 marked crash', () => {
      for (const answer of [...answers.fails, ...answers.rejects]) {
        assert.deepEqual([answer.status, answer.body, answer.googleStatus, answer.type], [500, 'Internal Server Error', 'crash', 'text/plain; charset=utf-8']);
      }
      assert.deepEqual([answers.eventFails[0].status, answers.eventFails[0].body, answers.eventFails[0].googleStatus], [500, 'Internal Server Error', 'error']);
      assert.ok(answers.fails.log.some((record) => record.logger === 'funcwsgi.errors' && record.exc_info.includes('hunter2')));
    });

    it('calls a CloudEvent function with the event, binary or structured, and answers 204 or its result', () => {
      assert.deepEqual(answers.helloPubSub.map((a) => [a.status, a.body]), [[204, '']]);
      assert.ok(answers.helloPubSub.log.some((record) => record.logger === 'function' && record.message === 'Hello, you!'));
      assert.deepEqual(answers.echoEvent.map((a) => JSON.parse(a.body)), [
        { id: '2', type: 'com.example.test', data: { hello: 'world' } },
        { id: '1', type: 'google.cloud.pubsub.topic.v1.messagePublished', data: { n: 1 } },
      ]);
    });

    it('calls a function exported without registering it, nested ones too', () => {
      assert.deepEqual([answers.helloWorld[0].body, answers['nested.greeter'][0].body], ['Hello, World', 'nested export']);
    });

    it('calls an exported function as a CloudEvent function when FUNCTION_SIGNATURE_TYPE says so', () => {
      assert.deepEqual([answers.logEvent[0].status, answers.logEvent[0].body], [204, '']);
      assert.ok(answers.logEvent.log.some((record) => record.logger === 'function' && record.message === 'event 1 of type google.cloud.pubsub.topic.v1.messagePublished'));
    });

    it('says which contract it chose and why, and which framework registered the function', () => {
      assert.ok(answers.helloWorld.log.some((record) => record.message === 'Recognised Functions Framework from FUNCTION_TARGET=helloWorld without a handler.js'));
      const registered = answers.helloHttp.log.find((record) => record.logger === 'funcwsgi.functions_framework').message;
      if (withLibrary) assert.match(registered, /^Functions Framework http function 'helloHttp': registered with @google-cloud\/functions-framework \(\/.*\/node_modules\/@google-cloud\/functions-framework\)$/);
      else assert.equal(registered, "Functions Framework http function 'helloHttp': registered with @google-cloud/functions-framework (nodejs26's stand-in)");
      assert.match(answers.helloWorld.log.find((record) => record.logger === 'funcwsgi.functions_framework').message, /^Functions Framework http function 'helloWorld': exported by \/.*\/index\.js$/);
    });
  });
}

describe('the same requests answered by the Functions Framework itself (from npm, NODE_ENV=production)', () => {
  let folder;
  before(() => { folder = deployed('gcf-http', { withLibrary: true }); });
  after(() => removeDeployed(folder));

  for (const target of Object.keys(CASES)) {
    it(`${target}: the same status, body and X-Google-Status`, async () => {
      const framework = await startFramework(folder, target);
      let expected;
      try {
        expected = [];
        for (const request of CASES[target]) expected.push(await ask(framework.url, request));
      } finally {
        await framework.stop();
      }
      const runtime = await startRuntime(settingsOf(folder, target));
      try {
        for (const [i, request] of CASES[target].entries()) {
          const got = await ask(runtime.url, request);
          assert.deepEqual([got.status, got.body, got.googleStatus], [expected[i].status, expected[i].body, expected[i].googleStatus], `${request[0]} ${request[1]}`);
        }
      } finally {
        await runtime.stop();
      }
    });
  }
});

describe('an ES module function', () => {
  for (const withLibrary of [false, true]) {
    it(`registers with ff.http() ${withLibrary ? 'with' : 'without'} the framework installed`, async (t) => {
      const folder = deployed('gcf-esm', { withLibrary });
      const runtime = await startRuntime({ HANDLER_FOLDER: folder, FUNCTION_TARGET: 'helloESM' });
      t.after(async () => { await runtime.stop(); removeDeployed(folder); });
      const response = await runtime.fetch('/?name=ESM');
      assert.deepEqual([response.status, response.headers.get('x-sample'), await response.text()], [200, 'esm', 'Hello ESM!']);
    });
  }
});
