// A call that blocks the event loop cannot be answered on time: JavaScript has no
// way to stop it, and while it runs nothing else (no 408, no probe) can run.
// The monitor notices such a block twice: a worker thread sees the loop's
// heartbeat stop and logs at once (while the loop is still blocked, so the line
// is there even if Kubernetes then kills the pod for its unanswered liveness
// probes); and when the loop comes back, the next liveness probe answers 503
// naming the block, once, so the platform learns of it even if the block ended
// before a probe timed out.
import { Worker } from 'node:worker_threads';
import { formatSeconds } from './call.js';
import { getLogger } from './logs.js';

const log = getLogger('funcwsgi.timeout');
const BEAT_MS = 100;

const WATCHER = `
const { workerData } = require('node:worker_threads');
const fs = require('node:fs');
const beat = new Float64Array(workerData.shared);
let reported = 0;
setInterval(() => {
  const last = beat[0];
  const stalled = Date.now() - last;
  if (stalled > workerData.limitMs && reported !== last) {
    reported = last;
    const record = workerData.json
      ? JSON.stringify({ timestamp: new Date().toISOString(), level: 'WARNING', logger: 'funcwsgi.timeout', message: 'The event loop has been blocked for ' + (stalled / 1000).toFixed(1) + 's, longer than SERVER_CALL_TIMEOUT=' + workerData.limit + 's: no call or probe can be answered until it returns', ...workerData.fields })
      : new Date().toISOString() + ' WARNING funcwsgi.timeout: The event loop has been blocked for ' + (stalled / 1000).toFixed(1) + 's';
    fs.writeSync(1, record + '\\n');
  }
}, ${BEAT_MS});
`;

export class LoopMonitor {
  constructor(config) {
    this.limit = config.serverCallTimeout;
    this.limitMs = this.limit * 1000;
    this.problem = null;
    const shared = new SharedArrayBuffer(8);
    this.beat = new Float64Array(shared);
    this.beat[0] = Date.now();
    let last = performance.now();
    this.interval = setInterval(() => {
      const now = performance.now();
      const gap = now - last - BEAT_MS;
      last = now;
      this.beat[0] = Date.now();
      if (gap > this.limitMs) this.noteBlock(gap / 1000, null);
    }, BEAT_MS);
    this.interval.unref();
    this.worker = new Worker(WATCHER, { eval: true, workerData: { shared, limitMs: this.limitMs, limit: formatSeconds(this.limit), json: config.serverLogFormat === 'json', fields: { function: config.funcName, namespace: config.funcNamespace } } });
    this.worker.unref();
  }

  /** A call found its deadline passed while the loop was busy. */
  blockedBy(call, seconds) {
    this.noteBlock(seconds, call);
  }

  noteBlock(seconds, call) {
    if (this.problem !== null) return;
    const by = call ? ` by ${call.method} ${call.path}` : '';
    this.problem = `the event loop was blocked for ${seconds.toFixed(1)}s${by}, longer than SERVER_CALL_TIMEOUT=${formatSeconds(this.limit)}s`;
    log.warning(`The event loop was blocked for ${seconds.toFixed(1)}s${by}, longer than SERVER_CALL_TIMEOUT=${formatSeconds(this.limit)}s; the next liveness probe fails`);
  }

  /** The block to report, once; null when there was none since the last probe. */
  livenessProblem() {
    const problem = this.problem;
    this.problem = null;
    return problem;
  }

  stop() {
    clearInterval(this.interval);
    this.worker.terminate();
  }
}
