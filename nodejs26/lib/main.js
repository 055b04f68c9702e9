// Start-up, in funcwsgi's order: read every setting once, print the first
// start-up line, load the function, run its start() hook, print the other three
// lines, listen. Any failure before listening is one line on stderr and exit 2.
// SIGTERM/SIGINT: stop taking connections, finish the calls in flight, run stop(),
// flush the spans and metrics, exit 0.
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

async function main() {
  const settings = fromEnv(process.env);
  configureLogging(settings);
  captureConsole();
  // The platform the function was written for, from its host's variables and files (lib/platforms/).
  const { config, platform, why } = await resolvePlatform(settings);
  if (config.serverReload && !process.env[WATCHED]) return watch(config);
  setActiveConfig(config);
  const lines = startupLines(config);
  const first = lines.length - 3; // the import line (and the contract's): before the function loads
  writeLines(lines.slice(0, first));
  if (why) log.info(`Recognised ${PLATFORMS[platform].title} from ${why}`);
  if (config.serverDebugPort) listenForDebugger(config);
  const tracing = config.traceCollectorEndpoint ? new (await import('./tracing.js')).Tracing(config, config.handlerFunctionName) : null;
  const metricsEndpoint = config.serverMetrics ? otlpMetricsEndpoint(config) : null;
  const faas = metricsEndpoint ? new (await import('./faas-metrics.js')).FaasMetrics(config, metricsEndpoint, config.handlerFunctionName) : null;
  const loaded = await loadForPlatform(config, platform);
  await runHook(loaded, 'start', true);
  const monitor = config.serverCallTimeout > 0 ? new LoopMonitor(config) : null;
  const runtime = new Runtime(config, loaded, { tracing, monitor, faas });
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
  let stopping = false;
  const stop = async (signal) => {
    if (stopping) return;
    stopping = true;
    log.info(`Received ${signal}: finishing the calls in flight, then stopping`);
    await runtime.stop();
    monitor?.stop();
    await runHook(loaded, 'stop', false);
    await tracing?.shutdown();
    await faas?.shutdown();
    process.exit(0);
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
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
