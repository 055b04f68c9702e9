// Stopping within SERVER_GRACEFUL_TIMEOUT: a stop() that never returns is left behind,
// a SIGTERM while start() runs is kept (stop() runs once start() returns, nothing is
// served), and a start() outlasting the timeout after the signal is left; exit 0 each time.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import { freePort, functions, SERVE, startRuntime } from './helpers.js';

const GRACE_MS = 2000;
const SLACK_MS = 3000;
const settings = (extra) => ({ HANDLER_FOLDER: functions('stop-hangs'), SERVER_GRACEFUL_TIMEOUT: String(GRACE_MS / 1000), ...extra });

/** Started without waiting for /healthz (start() may still be running): the child and what it wrote. */
async function launch(env) {
  const port = await freePort();
  const child = spawn(SERVE, [], { env: { PATH: process.env.PATH, SERVER_HOST: '127.0.0.1', SERVER_PORT: String(port), ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const run = { child, port, output: '' };
  child.stdout.on('data', (chunk) => { run.output += chunk; });
  child.stderr.on('data', (chunk) => { run.output += chunk; });
  run.exited = new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
  return run;
}

async function until(predicate, what, ms = 10_000) {
  const deadline = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const count = (text, part) => text.split(part).length - 1;

test('a stop() that never returns is left at SERVER_GRACEFUL_TIMEOUT, with one line, exit 0', async () => {
  const runtime = await startRuntime(settings({}));
  const kill = setTimeout(() => runtime.child.kill('SIGKILL'), 15_000);
  try {
    const began = Date.now();
    runtime.child.kill('SIGTERM');
    const exited = await runtime.exitedPromise;
    const took = Date.now() - began;
    const output = runtime.stdout + runtime.stderr;
    assert.deepEqual(exited, { code: 0, signal: null }, output);
    assert.ok(took > GRACE_MS - 500 && took < GRACE_MS + SLACK_MS, `${took} ms\n${output}`);
    assert.match(output, /stop hook began/);
    assert.equal(count(output, 'did not return within SERVER_GRACEFUL_TIMEOUT'), 1, output);
  } finally {
    clearTimeout(kill);
  }
});

/** SIGTERM while the function's start() runs (it takes `startMs`): how the runtime exited, how long it took, its output. */
async function stoppedWhileStarting(startMs) {
  const run = await launch(settings({ START_MS: startMs, STOP_HANGS: '0' }));
  const kill = setTimeout(() => run.child.kill('SIGKILL'), 15_000);
  try {
    await until(() => run.output.includes('start hook began'), 'start()');
    const began = Date.now();
    run.child.kill('SIGTERM');
    const exited = await run.exited;
    return { exited, took: Date.now() - began, run };
  } finally {
    clearTimeout(kill);
  }
}

test('SIGTERM while start() runs: stop() runs once start() returns, nothing is served, exit 0', async () => {
  const { exited, took, run } = await stoppedWhileStarting('1000');
  assert.deepEqual(exited, { code: 0, signal: null }, run.output);
  assert.ok(took < 1000 + SLACK_MS, `${took} ms\n${run.output}`);
  assert.match(run.output, /start hook returned[\s\S]*stop hook began[\s\S]*stop hook returned/);
  assert.doesNotMatch(run.output, /Starting nodejs26 server|did not return/);
});

test('a start() still running SERVER_GRACEFUL_TIMEOUT after SIGTERM is left, with one line, exit 0', async () => {
  const { exited, took, run } = await stoppedWhileStarting('1000000');
  assert.deepEqual(exited, { code: 0, signal: null }, run.output);
  assert.ok(took > GRACE_MS - 500 && took < GRACE_MS + SLACK_MS, `${took} ms\n${run.output}`);
  assert.equal(count(run.output, 'start() did not return within SERVER_GRACEFUL_TIMEOUT'), 1, run.output);
  assert.doesNotMatch(run.output, /stop hook began/);
});
