// Start-up, in funcwsgi's order: read every setting once, print the first
// start-up line, load the function, run its start() hook, print the other three
// lines, listen. Any failure before listening is one line on stderr and exit 2.
// SIGTERM/SIGINT: stop taking connections, finish the calls in flight, run stop(),
// flush the spans and metrics, exit 0. The calls and stop() share SERVER_GRACEFUL_TIMEOUT
// (stop() gets at least STOP_FLOOR_MS): a stop() still running then is left behind. A
// signal while start() runs is kept: once start() returns, stop() runs and nothing is
// served; a start() still running SERVER_GRACEFUL_TIMEOUT after the signal is left, exit 0.
import '../sdk/register.js';
import { spawn } from 'node:child_process';
import inspector from 'node:inspector';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { currentCall } from './calls.js';
import { fromEnv, http2On, otlpMetricsEndpoint } from './config.js';
import { heapLine } from './heap.js';
import { HTTP2_GAPS } from './http2.js';
import { reportAndExit, StartupError } from './errors.js';
import { captureConsole, configureLogging, getLogger } from './logs.js';
import { LoopMonitor } from './monitor.js';
import { loadForPlatform, resolve as resolvePlatform } from './platforms/index.js';
import { PLATFORMS } from './platforms/registry.js';
import { describeSteps, Runtime } from './server.js';
import { startupLines, writeLines } from './startup.js';
import { setActiveConfig } from '../sdk/index.js';

const log = getLogger('funcwsgi');
const WATCHED = 'FUNCWSGI_NODEJS26_WATCHED';
/** stop() gets what is left of SERVER_GRACEFUL_TIMEOUT, never less: after a drain that used it all, a quick stop() still runs. */
const STOP_FLOOR_MS = 1000;

async function main() {
  const settings = fromEnv(process.env);
  configureLogging(settings);
  captureConsole();
  // The platform the function was written for, from its host's variables and files (lib/platforms/).
  const { config, platform, why } = await resolvePlatform(settings);
  if (config.serverReload && !process.env[WATCHED]) return watch(config);
  setActiveConfig(config);
  const grace = config.serverGracefulTimeout;
  // Taken before start() runs, so a signal during start() is kept rather than the default death.
  let signalled = null; // the first SIGTERM/SIGINT: { name, deadline }
  let loaded, runtime, monitor, tracing, faas, startWatch;
  let serving = false;
  const handler = (name) => {
    if (signalled) return;
    signalled = { name, deadline: Date.now() + grace * 1000 };
    log.info(`Received ${name}: finishing the calls in flight, then stopping`);
    if (serving) return void shutdown();
    // Not serving yet: start() may still be running (or not begun).
    startWatch = setTimeout(() => {
      log.warning(`start() did not return within SERVER_GRACEFUL_TIMEOUT=${grace}s of ${name}; exiting without stop()`);
      process.exit(0);
    }, grace * 1000);
  };
  process.on('SIGTERM', () => handler('SIGTERM'));
  process.on('SIGINT', () => handler('SIGINT'));
  const shutdown = async () => {
    await runtime?.stop();
    monitor?.stop();
    if (loaded !== undefined) {
      let timer;
      const left = Math.max(signalled.deadline - Date.now(), STOP_FLOOR_MS);
      const inTime = await Promise.race([
        runHook(loaded, 'stop', false).then(() => true),
        new Promise((resolve) => { timer = setTimeout(() => resolve(false), left); }),
      ]);
      clearTimeout(timer);
      if (!inTime) log.warning(`stop() in ${loaded.path} did not return within SERVER_GRACEFUL_TIMEOUT=${grace}s; exiting without waiting for it`);
    }
    await tracing?.shutdown();
    await faas?.shutdown();
    process.exit(0);
  };
  const lines = startupLines(config);
  const first = lines.length - 3; // the import line (and the contract's): before the function loads
  writeLines(lines.slice(0, first));
  if (why) log.info(`Recognised ${PLATFORMS[platform].title} from ${why}`);
  if (config.serverDebugPort) listenForDebugger(config);
  tracing = config.traceCollectorEndpoint ? new (await import('./tracing.js')).Tracing(config, config.handlerFunctionName) : null;
  const metricsEndpoint = config.serverMetrics ? otlpMetricsEndpoint(config) : null;
  faas = metricsEndpoint ? new (await import('./faas-metrics.js')).FaasMetrics(config, metricsEndpoint, config.handlerFunctionName) : null;
  loaded = await loadForPlatform(config, platform);
  await runHook(loaded, 'start', true);
  clearTimeout(startWatch);
  if (signalled) {
    log.info(`${signalled.name} came while start() ran: not serving`);
    return shutdown();
  }
  monitor = config.serverCallTimeout > 0 ? new LoopMonitor(config) : null;
  runtime = new Runtime(config, loaded, { tracing, monitor, faas });
  writeLines(lines.slice(first));
  log.info(`Middleware stack: ${describeSteps(config).join(' > ')}`);
  log.info(heapLine());
  // A throw or rejection in a callback the function left behind belongs to the call it
  // came from when the call's context reached it: that call is answered 500 at once.
  const stray = (error, what) => {
    const call = currentCall.getStore();
    if (call !== undefined && !call.answered) return call.fail(error);
    log.log(40, [`${what}; the runtime keeps serving`, error instanceof Error ? error : new Error(String(error))]);
  };
  process.on('unhandledRejection', (reason) => stray(reason, 'A promise of the function was rejected and nobody handled it'));
  process.on('uncaughtException', (error) => stray(error, 'The function threw outside any call'));
  if (http2On(config)) log.warning(HTTP2_GAPS);
  try {
    await runtime.listen();
    if (config.serverMetrics && config.serverMetricsPort) await runtime.listenMetrics();
  } catch (error) {
    if (error.startup) throw new StartupError(error.message);
    throw error;
  }
  clearTimeout(startWatch);
  serving = true;
  if (signalled) await shutdown(); // the signal came while the server began to listen
}

/**
 * SERVER_DEBUG_PORT: open the Node inspector there before the function loads, so a
 * breakpoint in its top level can be set by a debugger that attaches early; nothing
 * waits for one. Off loopback, whoever reaches the port runs any code: said at start-up.
 */
function listenForDebugger(config) {
  const { serverDebugHost: host, serverDebugPort: port } = config;
  try {
    inspector.open(port, host, false);
  } catch (error) {
    throw new StartupError(`cannot listen for a debugger on SERVER_DEBUG_HOST='${host}' SERVER_DEBUG_PORT=${port}: ${error.message}`);
  }
  if (!inspector.url()) throw new StartupError(`cannot listen for a debugger on SERVER_DEBUG_HOST='${host}' SERVER_DEBUG_PORT=${port}: the inspector did not start (is the port taken?)`);
  const loopback = net.isIPv4(host) ? host.startsWith('127.') : host === '::1';
  if (!loopback) log.warning(`SERVER_DEBUG_HOST=${host}: the debugger port ${port} is open beyond this machine; whoever reaches it can run any code in the function's process`);
  log.info(`Debugger (Node inspector) listening on ${host}:${port}, pid ${process.pid}: attach a Node debugger (docs/servers.md#debugging)`);
}

/** start() failing stops start-up (exit 2); stop() failing is logged. A promise is awaited. */
async function runHook(loaded, name, fatal) {
  const hook = loaded.hooks[name];
  if (hook === undefined) return;
  try {
    await hook();
  } catch (error) {
    const kind = error instanceof Error ? error.name : typeof error;
    if (fatal) throw new StartupError(`${name}() in ${loaded.path} raised ${kind}: ${error instanceof Error ? error.message : String(error)}`, error instanceof Error ? error.stack : undefined);
    log.log(40, [`${name}() in ${loaded.path} raised`, error]);
  }
}

/** SERVER_RELOAD: run the runtime under `node --watch`, restarted when the function's folder changes. */
function watch(config) {
  const script = fileURLToPath(import.meta.url);
  const child = spawn(process.execPath, [...process.execArgv, '--watch-path', path.resolve(config.handlerFolder), '--watch-preserve-output', script], { stdio: 'inherit', env: { ...process.env, [WATCHED]: '1' } });
  for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 0 : 1)));
}

main().catch((error) => {
  if (error instanceof StartupError) reportAndExit(error);
  process.stderr.write(`funcwsgi: error: ${error?.stack ?? error}\n`);
  process.exit(1);
});
