// The platform registry (lib/platforms/): which platform the host's variables
// mark, HANDLER_PLATFORM, the handler settings winning over a platform's, and
// the module hook that supplies a platform's modules.
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fromEnv } from '../../lib/config.js';
import { recognise, resolve } from '../../lib/platforms/index.js';
import { PLATFORMS, RECOGNITION_ORDER } from '../../lib/platforms/registry.js';
import { functions, runToExit } from '../helpers.js';

const SAM = functions('aws-lambda-sam');
const nowhere = { HANDLER_FOLDER: '/nonexistent' };

describe('recognise', () => {
  for (const [environ, platform] of [
    [{}, 'funcwsgi'],
    [{ _HANDLER: 'index.handler' }, 'aws-lambda'],
    [{ AWS_LAMBDA_FUNCTION_NAME: 'f' }, 'aws-lambda'],
    [{ AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x' }, 'aws-lambda'],
    [{ HANDLER_FOLDER: SAM }, 'aws-lambda'],
    [{ USERFUNCVOL: '/tmp' }, 'fission'],
    [{ _HANDLER: 'index.handler', USERFUNCVOL: '/tmp' }, 'aws-lambda'],
    [{ _HANDLER: 'index.handler', HANDLER_PLATFORM: 'funcwsgi' }, 'funcwsgi'],
  ]) {
    it(`${JSON.stringify(environ)} -> ${platform}`, async () => {
      assert.equal((await recognise(fromEnv({ ...nowhere, ...environ }))).platform, platform);
    });
  }

  it('asks the platforms with a module, in their order', () => {
    assert.deepEqual(RECOGNITION_ORDER, Object.keys(PLATFORMS).filter((name) => PLATFORMS[name].module !== null).sort((a, b) => PLATFORMS[a].precedence - PLATFORMS[b].precedence));
  });

  it('refuses a HANDLER_PLATFORM it does not know, naming the choices', () => {
    assert.throws(() => fromEnv({ HANDLER_PLATFORM: 'heroku' }), /HANDLER_PLATFORM='heroku' is invalid: expected one of funcwsgi, kyma, kubeless, aws-lambda/);
  });
});

describe('resolve: the platform locates the handler, the handler settings win', () => {
  const located = async (environ) => (await resolve(fromEnv(environ))).config;

  it('takes folder, file and export from _HANDLER below LAMBDA_TASK_ROOT', async () => {
    const c = await located({ _HANDLER: 'hello-world/app.lambdaHandler', LAMBDA_TASK_ROOT: SAM });
    assert.deepEqual([c.handlerFolder, c.handlerModuleName, c.handlerFunctionName], [path.join(SAM, 'hello-world'), 'app', 'lambdaHandler']);
  });

  it('takes them from the SAM template when nothing else names them', async () => {
    const c = await located({ HANDLER_FOLDER: SAM });
    assert.deepEqual([c.handlerFolder, c.handlerModuleName, c.handlerFunctionName, c.serverCallTimeout], [path.join(SAM, 'hello-world'), 'app', 'lambdaHandler', 3]);
  });

  it('keeps HANDLER_FUNCTION_NAME, HANDLER_MODULE_NAME and SERVER_CALL_TIMEOUT when set', async () => {
    const c = await located({ _HANDLER: 'hello-world/app.lambdaHandler', LAMBDA_TASK_ROOT: SAM, HANDLER_FUNCTION_NAME: 'other', HANDLER_MODULE_NAME: 'main', SERVER_CALL_TIMEOUT: '9' });
    assert.deepEqual([c.handlerModuleName, c.handlerFunctionName, c.serverCallTimeout], ['main', 'other', 9]);
  });

  it('keeps HANDLER_FOLDER when set with _HANDLER', async () => {
    const c = await located({ _HANDLER: 'app.lambdaHandler', HANDLER_FOLDER: path.join(SAM, 'hello-world'), LAMBDA_TASK_ROOT: '/elsewhere' });
    assert.equal(c.handlerFolder, path.join(SAM, 'hello-world'));
  });

  it("keeps FUNC_HANDLER (Kubeless's module.function) over _HANDLER", async () => {
    const c = await located({ _HANDLER: 'hello-world/app.lambdaHandler', LAMBDA_TASK_ROOT: SAM, FUNC_HANDLER: 'mine.run' });
    assert.deepEqual([c.handlerModuleName, c.handlerFunctionName], ['mine', 'run']);
  });

  it('leaves a function with no platform signal as it is', async () => {
    const given = fromEnv(nowhere);
    const { config, platform } = await resolve(given);
    assert.equal(platform, 'funcwsgi');
    assert.equal(config, given);
  });

  it('refuses a malformed _HANDLER in one line naming it', async () => {
    const { code, stderr } = await runToExit({ _HANDLER: 'nodot', LAMBDA_TASK_ROOT: SAM });
    assert.equal(code, 2);
    assert.equal(stderr, "funcwsgi: error: _HANDLER='nodot' is invalid: expected file.export or dir/file.export such as 'index.handler'\n");
  });
});
