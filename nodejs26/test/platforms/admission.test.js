// Admission holds for other platforms' functions as for any: past SERVER_MAX_INFLIGHT a call is
// answered 503 with Retry-After at once, before the platform's contract sees it; the probes still answer.
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ROOT, startRuntime } from '../helpers.js';

const FIXTURES = path.join(ROOT, '..', 'tests', 'functions');
const PLATFORMS = {
  'aws-lambda': { env: { _HANDLER: 'index.handler', LAMBDA_TASK_ROOT: path.join(FIXTURES, 'conformance_lambda_nodejs26') } },
  fission: {
    env: { USERFUNCVOL: path.join(FIXTURES, 'conformance_fission_nodejs26') },
    specialise: { filepath: path.join(FIXTURES, 'conformance_fission_nodejs26', 'fixture.js'), functionName: '' },
  },
};

describe('admission', () => {
  for (const [name, { env, specialise }] of Object.entries(PLATFORMS)) {
    it(`refuses a ${name} call past SERVER_MAX_INFLIGHT with 503 and Retry-After`, async () => {
      const runtime = await startRuntime({ ...env, SERVER_MAX_INFLIGHT: '1' });
      try {
        if (specialise) assert.equal((await runtime.fetch('/v2/specialize', { method: 'POST', body: JSON.stringify(specialise), headers: { 'content-type': 'application/json' } })).status, 202);
        const slow = runtime.fetch('/sleep?seconds=2');
        // Polled: a call answered 200 came before the slow one was admitted; the first 503 is the refusal.
        let refused;
        for (const deadline = Date.now() + 1500; Date.now() < deadline;) {
          refused = await runtime.fetch('/hello');
          await refused.text();
          if (refused.status === 503) break;
        }
        assert.deepEqual([refused.status, refused.headers.get('retry-after')], [503, '1']);
        assert.equal((await runtime.fetch('/health/readiness')).status, 200);
        const answered = await slow;
        assert.deepEqual([answered.status, await answered.text()], [200, 'slept']);
      } finally {
        await runtime.stop();
      }
    });
  }
});
