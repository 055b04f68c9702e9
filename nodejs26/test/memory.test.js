// V8's heap under bin/serve (docs/nodejs26.md#memory): without a container memory
// limit the young generation is capped at 4 MB per semi-space and the old
// generation grows 2x between full collections; under a limit V8 sizes both; a
// semi-space size in NODE_OPTIONS wins; start-up says which. The old generation
// has no cap, so a call may still hold hundreds of MB.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import { after, before, describe, test } from 'node:test';
import { functions, startRuntime } from './helpers.js';

/** Whether a container memory limit below the machine's memory is in force (bin/serve reads the same files). */
function containerLimited() {
  for (const file of ['/sys/fs/cgroup/memory.max', '/sys/fs/cgroup/memory/memory.limit_in_bytes']) {
    try {
      const value = fs.readFileSync(file, 'utf8').trim();
      return value !== 'max' && Number(value) < os.totalmem();
    } catch {
      // not this cgroup version
    }
  }
  return false;
}

const heapLine = (runtime) => runtime.waitFor((r) => r.records().find((record) => record.message.startsWith('V8 heap: ')), 'the V8 heap line');

describe('at default settings', () => {
  let runtime;
  before(async () => { runtime = await startRuntime({ HANDLER_FOLDER: functions('heap') }); });
  after(() => runtime.stop());

  test('without a container limit the young generation and the old generation\'s growth are bounded, and start-up says so', async () => {
    const { message } = await heapLine(runtime);
    const { execArgv } = await (await runtime.fetch('/')).json();
    if (containerLimited()) {
      assert.deepEqual(execArgv, []);
      assert.match(message, /^V8 heap: young generation sized by V8 from the container's memory limit, old generation grown as V8 chooses, heap limit \d+ MB$/);
    } else {
      assert.deepEqual(execArgv, ['--max-semi-space-size=4', '--heap-growing-percent=100']);
      assert.match(message, /^V8 heap: young generation at most 4 MB per semi-space \(--max-semi-space-size=4\), old generation grown 2x its live data between full collections \(--heap-growing-percent=100\), heap limit \d+ MB$/);
    }
  });

  test('a call holding 200 MB at once is answered', async () => {
    const response = await runtime.fetch('/?mb=200');
    assert.equal(response.status, 200);
    const seen = await response.json();
    assert.equal(seen.arrays, 200 * 64);
    assert.ok(seen.heldMb >= 200, `V8 held ${seen.heldMb} MB`);
  });
});

test('a semi-space size in NODE_OPTIONS is the one V8 gets, and start-up says so', async () => {
  const runtime = await startRuntime({ HANDLER_FOLDER: functions('heap'), NODE_OPTIONS: '--max-semi-space-size=16' });
  try {
    const { message } = await heapLine(runtime);
    assert.match(message, /^V8 heap: young generation at most 16 MB per semi-space \(NODE_OPTIONS\), /);
    assert.ok(!(await (await runtime.fetch('/')).json()).execArgv.some((flag) => flag.startsWith('--max-semi-space-size')));
  } finally {
    await runtime.stop();
  }
});

test('SERVER_RELOAD: the runtime restarted under node --watch runs with the same bounds', async () => {
  const runtime = await startRuntime({ HANDLER_FOLDER: functions('heap'), SERVER_RELOAD: 'true' });
  try {
    const { execArgv } = await (await runtime.fetch('/')).json();
    const parent = containerLimited() ? [] : ['--max-semi-space-size=4', '--heap-growing-percent=100'];
    assert.deepEqual(execArgv.slice(0, parent.length), parent);
  } finally {
    await runtime.stop();
  }
});
