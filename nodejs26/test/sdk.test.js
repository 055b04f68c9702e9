// The sdk without a server, as a function's own unit tests use it:
// `node --import <repo>/nodejs26/sdk/register.js --test` (this file runs so).
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { test } from 'node:test';
import * as sdk from 'sdk';
import { freePort } from './helpers.js';

test("'sdk' resolves to the runtime's sdk, for import and for require, one instance", () => {
  const require = createRequire(import.meta.url);
  const required = require('sdk');
  assert.equal(required.getTracer, sdk.getTracer);
  assert.equal(typeof sdk.emitCloudEvent, 'function');
});

test('outside a call: no request, no event, a no-op tracer whose spans still work', () => {
  assert.equal(sdk.getRequest(), null);
  assert.equal(sdk.getCloudEvent(), null);
  const span = sdk.getTracer().startSpan('in a unit test');
  span.setAttribute('a', 1);
  span.end();
  assert.equal(span.isRecording(), false);
});

test('the metadata from the environment at each call, with the runtime defaults', () => {
  process.env.FUNC_NAME = 'from-a-test';
  assert.equal(sdk.getFunctionName(), 'from-a-test');
  delete process.env.FUNC_NAME;
  assert.equal(sdk.getFunctionName(), '');
  assert.equal(sdk.getRuntime(), process.env.FUNC_RUNTIME ?? 'nodejs26');
  assert.equal(sdk.getTimeout(), 180);
  assert.equal(sdk.getBodySizeLimit(), 100);
  assert.deepEqual(sdk.getLabels(), {});
  assert.equal(typeof sdk.getFunctionName(), 'string');
});

test('publishing without PUBLISHER_PROXY_ADDRESS rejects with PublisherNotConfigured', async () => {
  await assert.rejects(sdk.emitCloudEvent('t', '/s', { a: 1 }), (error) => error instanceof sdk.PublisherNotConfigured && error instanceof sdk.PublishError && /PUBLISHER_PROXY_ADDRESS is not set/.test(error.message));
});

test('publishing something that is no event is a TypeError', async () => {
  sdk.setActiveConfig({ ...(await import('../lib/config.js')).fromEnv({ PUBLISHER_PROXY_ADDRESS: `http://127.0.0.1:${await freePort()}/` }) });
  await assert.rejects(sdk.publishCloudEvent('text'), TypeError);
  await assert.rejects(sdk.emitCloudEvent('t', '', {}), TypeError);
});

test('an unreachable proxy is a PublishError naming the address', async () => {
  await assert.rejects(sdk.emitCloudEvent('t', '/s', 1), (error) => error instanceof sdk.PublishError && /^cannot publish the CloudEvent to http:\/\/127\.0\.0\.1:\d+\/: ECONNREFUSED/.test(error.message));
});

test('the logger: info, warning, error, exception', () => {
  const log = sdk.getLogger();
  for (const name of ['debug', 'info', 'warning', 'warn', 'error', 'critical', 'exception']) assert.equal(typeof log[name], 'function');
});

test('secret(): the first folder of HANDLER_SECRETS_PATH holding it, one newline off, read again when it changes', async () => {
  const fs = await import('node:fs');
  const os = await import('node:os');
  const path = await import('node:path');
  const top = fs.mkdtempSync(path.join(os.tmpdir(), 'sdk-secrets-'));
  const saved = process.env.HANDLER_SECRETS_PATH;
  sdk.setActiveConfig(null); // as in a function's unit tests: the environment at each call
  try {
    fs.writeFileSync(path.join(top, 'api-key'), 'k-123\n');
    process.env.HANDLER_SECRETS_PATH = `${path.join(top, 'none')}:${top}`;
    assert.equal(sdk.secret('api-key'), 'k-123');
    fs.writeFileSync(path.join(top, 'staged'), 'k-456-rotated\n');
    fs.renameSync(path.join(top, 'staged'), path.join(top, 'api-key'));
    assert.equal(sdk.secret('api-key'), 'k-456-rotated');
    assert.throws(() => sdk.secret('other'), (error) => error instanceof sdk.SecretNotFound
      && error.message === `secret 'other' not found: no file 'other' in ${path.join(top, 'none')}, ${top} (HANDLER_SECRETS_PATH)`);
    assert.throws(() => sdk.secret('../etc/passwd'), TypeError);
  } finally {
    if (saved === undefined) delete process.env.HANDLER_SECRETS_PATH; else process.env.HANDLER_SECRETS_PATH = saved;
    fs.rmSync(top, { recursive: true, force: true });
  }
});
