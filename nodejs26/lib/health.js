// Readiness and liveness: /health/readiness, /health/liveness and /healthz
// (funcwsgi/probes/health.py). Each answers 200 OK when every check passes
// and 503 with the first problem otherwise. A check returns null when healthy or
// a short reason; the function's ready()/alive() hooks become checks here.
import { getLogger } from './logs.js';

const log = getLogger('funcwsgi.health');
export const OK = Buffer.from('OK');

// The probe paths, declared here only (as in funcwsgi/middleware/reserved.py).
export const READINESS_PATH = '/health/readiness';
export const LIVENESS_PATH = '/health/liveness';
/** Kyma's name for the liveness probe, answered alike. */
export const KYMA_LIVENESS_PATH = '/healthz';
export const PROBE_PATHS = Object.freeze([READINESS_PATH, LIVENESS_PATH, KYMA_LIVENESS_PATH]);

/**
 * The hook returns true, undefined or null when healthy, false when not, or a
 * string saying why not (the 503 body); a promise is awaited. A throw is logged
 * with its stack and answered with a fixed message.
 */
export function hookCheck(hook, name, where) {
  const failed = `${name}() failed`;
  const saidNo = `${name}() returned False`; // funcwsgi's words, byte for byte
  const judge = (result) => {
    if (result === undefined || result === null || result === true) return null;
    if (typeof result === 'string') return result || saidNo;
    return result ? null : saidNo;
  };
  const broke = (error) => {
    log.log(40, [`${name}() in ${where} raised`, error]);
    return failed;
  };
  return async () => {
    try {
      const result = hook();
      return judge(result && typeof result.then === 'function' ? await result : result);
    } catch (error) {
      return broke(error);
    }
  };
}

export async function firstProblem(checks) {
  for (const check of checks) {
    const problem = await check();
    if (problem) return problem;
  }
  return null;
}
