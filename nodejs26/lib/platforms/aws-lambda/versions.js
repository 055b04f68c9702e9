// Which Lambda Node.js runtime AWS_EXECUTION_ENV names: what a handler may do depends on it.

/** The version AWS_EXECUTION_ENV names (AWS_Lambda_nodejs22.x -> 22), else null (unset or another language). */
export function runtimeVersion(executionEnv) {
  const match = /^AWS_Lambda_nodejs(\d+)\.x$/.exec(executionEnv ?? '');
  return match ? Number(match[1]) : null;
}
