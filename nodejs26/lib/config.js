// Every setting of the runtime, declared once and read once.
//
// The same names, defaults, aliases and precedence as funcwsgi/config.py: each
// entry of SETTINGS is one setting (environment name, default, parser, what is
// expected, one-line description, compatibility aliases). fromEnv() reads a
// mapping (process.env by default) once into a frozen object; the rest of the
// runtime reads that object, never the environment. Where nodejs26 departs
// from funcwsgi on purpose, the entry says so in `differs` (the settings
// parity test, tests/nodejs26/test_settings_parity.py, lists the same).

import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { ConfigError, pyRepr } from './errors.js';
import { PLATFORM_NAMES } from './platforms/registry.js';

// -- parsers: each throws on a bad value; fromEnv turns that into a ConfigError ----

const bad = () => { throw new Error('invalid'); };
const INTEGER = /^[+-]?\d+$/;
const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

export const parseStr = (raw) => raw;
export const parseOptionalStr = (raw) => raw || null;
const int = (raw) => (INTEGER.test(raw.trim()) ? Number.parseInt(raw.trim(), 10) : bad());
const float = (raw) => (NUMBER.test(raw.trim()) ? Number(raw.trim()) : bad());
export const parsePort = (raw) => { const port = int(raw); return port >= 1 && port <= 65535 ? port : bad(); };
export const parsePortOrZero = (raw) => (raw.trim() === '0' ? 0 : parsePort(raw));
export const positiveInt = (raw) => { const n = int(raw); return n >= 1 ? n : bad(); };
export const nonNegativeInt = (raw) => { const n = int(raw); return n >= 0 ? n : bad(); };
export const optionalNonNegativeInt = (raw) => (raw.trim() ? nonNegativeInt(raw) : null);
export const positiveFloat = (raw) => { const n = float(raw); return n > 0 && Number.isFinite(n) ? n : bad(); };
export const nonNegativeFloat = (raw) => { const n = float(raw); return n >= 0 && Number.isFinite(n) ? n : bad(); };
/** The longest duration a setting takes (about eleven days), as in funcwsgi/config/parsers.py: longer ones mean
 * nothing for a call and overflow the timers under the servers (Node's setTimeout takes at most 2^31-1 ms). */
export const MAX_SECONDS = 1_000_000;
export const seconds = (raw) => { const n = nonNegativeFloat(raw); return n <= MAX_SECONDS ? n : bad(); };
export const positiveSeconds = (raw) => { const n = positiveFloat(raw); return n <= MAX_SECONDS ? n : bad(); };
/** A folder: set but empty is refused rather than read as the working directory. */
export const parseFolder = (raw) => (raw ? raw : bad());
const TRUE = new Set(['1', 'true', 'yes', 'on']);
const FALSE = new Set(['0', 'false', 'no', 'off', '']);
export function parseBool(raw) {
  const value = raw.trim().toLowerCase();
  if (TRUE.has(value)) return true;
  if (FALSE.has(value)) return false;
  return bad();
}

export const optionalBool = (raw) => (raw.trim() ? parseBool(raw) : null);

/** A JSON object, or k=v,k2=v2 as Kubernetes label selectors write it. */
export function parseMapping(raw) {
  const text = raw.trim();
  if (!text) return {};
  if (text.startsWith('{')) {
    const loaded = JSON.parse(text);
    if (loaded === null || typeof loaded !== 'object' || Array.isArray(loaded)) bad();
    return Object.fromEntries(Object.entries(loaded).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]));
  }
  const result = {};
  for (const item of text.split(',')) {
    const at = item.indexOf('=');
    if (at < 0 || !item.slice(0, at).trim()) bad();
    result[item.slice(0, at).trim()] = item.slice(at + 1).trim();
  }
  return result;
}

export function parsePath(raw) {
  const value = raw.trim();
  return value.startsWith('/') && !/\s/.test(value) ? value : bad();
}

/** An IP address to bind to, written as funcwsgi writes it (IPv6 compressed). */
export function parseHost(raw) {
  const value = raw.trim();
  const family = net.isIP(value);
  if (family === 4) return value;
  if (family === 6) return new URL(`http://[${value}]/`).hostname.slice(1, -1);
  return bad();
}

const QUANTITY = /^\d+(\.\d+)?([KMGTPE]i?|k|m)?$/;
export const parseQuantity = (raw) => { const v = raw.trim(); return !v || QUANTITY.test(v) ? v : bad(); };

/** Comma-separated items, blanks dropped: "a, b," is ["a", "b"]. */
export const parseList = (raw) => raw.split(',').map((item) => item.trim()).filter(Boolean);
const ORIGIN = /^(https?:\/\/[A-Za-z0-9.-]+(:\d{1,5})?|\*)$/;
/** An HTTP header name (RFC 9110 token). */
export const TOKEN = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/;
export const parseOrigins = (raw) => { const o = parseList(raw); return o.every((x) => ORIGIN.test(x)) ? o : bad(); };
export const parseHeaderNames = (raw) => { const n = parseList(raw); return n.every((x) => x === '*' || TOKEN.test(x)) ? n : bad(); };
export const parseMethods = (raw) => { const m = parseList(raw).map((x) => x.toUpperCase()); return m.every((x) => /^[A-Z]+$/.test(x)) ? m : bad(); };
/** ':'-separated absolute folder paths, as PATH writes them; blanks dropped. */
export const parseFolders = (raw) => { const f = raw.split(':').map((x) => x.trim()).filter(Boolean); return f.every((x) => x.startsWith('/')) ? f : bad(); };
export const megabytes = (raw) => Math.trunc(nonNegativeFloat(raw) * 1024 * 1024);

export function choice(...names) {
  return (raw) => { const v = raw.trim().toLowerCase(); return names.includes(v) ? v : bad(); };
}
export function optionalChoice(...names) {
  const inner = choice(...names);
  return (raw) => (raw.trim() ? inner(raw) : null);
}

// -- the declarations ----------------------------------------------------------------

export const SIGNATURES = ['req-res', 'req', 'none', 'event-context'];
export const DEFAULT_PROPAGATORS = ['tracecontext', 'baggage', 'b3multi'];
export const PROPAGATORS = ['tracecontext', 'baggage', 'b3', 'b3multi', 'none'];
export const SERVER_ADAPTERS = ['node'];
export const LOG_LEVELS = ['debug', 'info', 'warning', 'error', 'critical'];
/** File endings a module may have, in the order they are looked for. */
export const MODULE_EXTENSIONS = ['.js', '.mjs', '.cjs'];

const KYMA_PY = 'Kyma python314';
const KYMA_NODE = 'Kyma nodejs26';
const KYMA_NODE_OLD = 'Kyma nodejs20-24';
const KUBELESS = 'Kyma <=3.12 / Kubeless';
const FUNCTIONS_FRAMEWORK = 'Functions Framework';
const AZURE = 'Azure Functions';
/** How a Functions Framework function is called (FUNCTION_SIGNATURE_TYPE): its framework's http and cloudevent. */
export const FRAMEWORK_SIGNATURES = ['http', 'cloudevent'];
const AWS_LAMBDA = 'AWS Lambda';
const FISSION = 'Fission';
export const LAMBDA_PAYLOAD_FORMATS = ['1.0', '2.0'];

/** Folders looked in when nothing sets HANDLER_FOLDER: the reference document's '/', then
 * the folder Kyma's Node runtimes mount the function at. */
export const DEFAULT_FOLDERS = ['/', '/usr/src/app/function'];
/** Where platforms mount secrets, in the order sdk.secret() looks (funcwsgi/config.py's DEFAULT_SECRET_FOLDERS). */
export const DEFAULT_SECRET_FOLDERS = ['/var/openfaas/secrets', '/run/secrets', '/workspace/secret', '/secret/mount/path'];
/** Calls in flight when SERVER_MAX_INFLIGHT is unset: a memory guard far above ordinary bursts, as in
 * funcwsgi (waiting time, SERVER_QUEUE_TARGET, decides admission; docs/servers.md#admission). */
export const MAX_INFLIGHT = 1000;
/** Where the FaaS metrics go: OTEL_EXPORTER_OTLP_METRICS_ENDPOINT, else (SERVER_METRICS_OTLP) the trace collector's /v1/metrics. */
export function otlpMetricsEndpoint(config) {
  if (config.otelExporterOtlpMetricsEndpoint) return config.otelExporterOtlpMetricsEndpoint;
  if (config.serverMetricsOtlp && config.traceCollectorEndpoint) return `${new URL(config.traceCollectorEndpoint).origin}/v1/metrics`;
  return null;
}
/** The bound on calls in flight; 0 for none. */
export const maxInflight = (config) => config.serverMaxInflight ?? MAX_INFLIGHT;
/** Whether HTTP/2 is served beside HTTP/1.1: SERVER_HTTP2=true (off by default, as on granian: docs/nodejs26.md#http2). */
export const http2On = (config) => config.serverHttp2 ?? false;
/** Module names looked for when nothing sets HANDLER_MODULE_NAME. */
export const DEFAULT_MODULES = ['handler', 'index'];

const alias = (name, origin, parse, expected) => ({ name, origin, parse, expected });

function setting(env, defaultValue, parse, expected, description, options = {}) {
  const field = env.toLowerCase().replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase());
  return Object.freeze({ env, field, default: defaultValue, parse, expected, description, aliases: options.aliases ?? [], defaultDoc: options.defaultDoc, differs: options.differs, secret: Boolean(options.secret) });
}

export const SETTINGS = Object.freeze([
  // -- function metadata
  setting('FUNC_NAME', '', parseStr, 'a string', 'Name of the function, used in logs, traces and metrics.'),
  setting('FUNC_NAMESPACE', '', parseStr, 'a string', 'Namespace the function runs in.', { aliases: [alias('SERVICE_NAMESPACE', KYMA_PY)] }),
  setting('FUNC_LABELS', {}, parseMapping, 'a JSON object or k=v,k2=v2', 'Labels of the function, exposed to it as an object.', { defaultDoc: "''" }),
  setting('FUNC_ANNOTATIONS', {}, parseMapping, 'a JSON object or k=v,k2=v2', 'Annotations of the function, exposed to it as an object.', { defaultDoc: "''" }),
  setting('FUNC_MEMORY_LIMIT', '', parseQuantity, 'a memory quantity such as 128Mi', 'Memory limit reported to main(event, context); read from the cgroup when unset.'),
  setting('FUNC_VERSION', '', parseStr, 'a string', 'Version of the function, reported as faas.version on spans and metrics.'),
  setting('FUNC_RUNTIME', 'nodejs26', parseStr, 'a string', 'Runtime name reported in start-up lines and to the function.', { differs: 'the runtime this is' }),
  // -- server
  setting('SERVER_HOST', '0.0.0.0', parseHost, 'an IP address such as 0.0.0.0 or ::', "Address the server binds to; '::' for IPv6."),
  setting('SERVER_PORT', 8080, parsePort, 'an integer from 1 to 65535', 'TCP port the server listens on.', { aliases: [alias('FUNC_PORT', KUBELESS), alias('PORT', FUNCTIONS_FRAMEWORK)] }),
  setting('SERVER_NUMTHREADS', 50, positiveInt, 'a positive integer', 'Accepted for compatibility; nodejs26 serves calls concurrently on one event loop, so it has no effect.', { aliases: [alias('CHERRYPY_NUMTHREADS', KUBELESS)], differs: 'no threads in Node: checked, then unused' }),
  setting('SERVER_CALL_TIMEOUT', 180, seconds, 'a non-negative number of seconds up to 1000000', 'Seconds a call may take before the client gets 408 (0 = no limit).', { aliases: [alias('FUNC_TIMEOUT', KYMA_PY)] }),
  setting('SERVER_ADAPTER', 'node', choice(...SERVER_ADAPTERS), `one of ${SERVER_ADAPTERS.join(', ')}`, "Server that serves the function: nodejs26 has one, Node's own node:http.", { differs: 'Node has one server, node:http; gunicorn, waitress, werkzeug, granian and kafka are Python servers' }),
  setting('SERVER_WORKERS', 1, positiveInt, 'a positive integer', 'Worker processes: nodejs26 serves from one process, so only 1 is accepted; scale with replicas.', { differs: 'one process; a value above 1 is refused' }),
  setting('SERVER_MAX_BODY_SIZE', 100 * 1024 * 1024, nonNegativeInt, 'a non-negative integer of bytes', 'Largest request body accepted, in bytes; larger bodies get 413 (0 = no limit).', {
    aliases: [alias('FUNC_BODY_MB_LIMIT', KYMA_PY, megabytes, 'a non-negative number of megabytes'), alias('FUNC_MEMFILE_MAX', KUBELESS), alias('REQ_MB_LIMIT', KYMA_NODE_OLD, megabytes, 'a non-negative number of megabytes')],
    defaultDoc: '104857600 (100 MiB)', differs: "adds Kyma nodejs20-24's REQ_MB_LIMIT alias",
  }),
  setting('SERVER_GRACEFUL_TIMEOUT', 25, seconds, 'a non-negative number of seconds up to 1000000', "Seconds in-flight calls may run after SIGTERM before the server exits (below Kubernetes' 30 s grace period)."),
  setting('SERVER_DEBUG_PORT', 0, parsePortOrZero, '0 or an integer from 1 to 65535', 'Listen for a debugger on this port (debugpy, the funcwsgi[debug] extra; nodejs26: the Node inspector); 0 = off.'),
  setting('SERVER_DEBUG_HOST', '127.0.0.1', parseHost, 'an IP address such as 127.0.0.1', 'Address the debugger port listens on; another than loopback is warned about: whoever reaches it runs code.'),
  setting('SERVER_RELOAD', false, parseBool, 'true or false', "Restart the runtime when a file in the function's folder changes (node --watch)."),
  setting('SERVER_MAX_REQUESTS', 0, nonNegativeInt, 'a non-negative integer', 'Recycle a gunicorn worker after this many calls (0 = never); refused by nodejs26, which has no workers to recycle.'),
  // -- slow and hostile clients (docs/nodejs26.md#slow-and-hostile-clients; lib/connections.js)
  setting('SERVER_HEADER_TIMEOUT', 10, positiveSeconds, 'a positive number of seconds up to 1000000', 'Seconds a client may take to send a whole request head; then it gets 408 and is closed.'),
  setting('SERVER_BODY_TIMEOUT', 10, positiveSeconds, 'a positive number of seconds up to 1000000', 'Seconds a request body may pause between two reads; then the client gets 408 and is closed.'),
  setting('SERVER_SEND_TIMEOUT', 30, positiveSeconds, 'a positive number of seconds up to 1000000', 'Seconds a response may wait for a client that does not read it; then the connection is closed.'),
  setting('SERVER_KEEPALIVE_TIMEOUT', 7200, positiveSeconds, 'a positive number of seconds up to 1000000', "Seconds an idle keep-alive connection stays open between calls: longer than the platform proxies' own idle timeouts, so that they close first (docs/deployment.md#idle-connections-behind-the-platforms-proxy)."),
  setting('SERVER_MAX_CONNECTIONS', 1000, positiveInt, 'a positive integer', 'Open connections; at the limit the longest-waiting idle or unfinished one is closed for a new one.'),
  setting('SERVER_QUEUE_TARGET', 1, positiveSeconds, 'a positive number of seconds up to 1000000', 'Longest a call may wait to start (behind the event loop); a call that would wait longer gets 503 with Retry-After at once (docs/servers.md#admission).', { defaultDoc: '1, or SERVER_CALL_TIMEOUT when shorter' }),
  setting('SERVER_MAX_INFLIGHT', null, optionalNonNegativeInt, 'a non-negative integer', 'Memory guard: calls running at once; more get 503 with Retry-After (0 = no bound).', {
    defaultDoc: '1000',
  }),
  // -- HTTP/2 (docs/nodejs26.md#http2; lib/http2.js)
  setting('SERVER_HTTP2', null, optionalBool, 'true or false', 'Also serve HTTP/2 without TLS (h2c, prior knowledge) on SERVER_PORT; false turns it off (docs/nodejs26.md#http2).', {
    defaultDoc: 'false', differs: 'prior knowledge only: node:http2 takes no Upgrade: h2c',
  }),
  setting('SERVER_HTTP2_MAX_STREAMS', 100, positiveInt, 'a positive integer', 'Streams one HTTP/2 connection may have open at once (SETTINGS_MAX_CONCURRENT_STREAMS); more are refused.'),
  setting('SERVER_LOG_FORMAT', 'json', choice('json', 'text'), 'json or text', 'Log record format on stdout.'),
  setting('SERVER_LOG_LEVEL', 'info', choice(...LOG_LEVELS), `one of ${LOG_LEVELS.join(', ')}`, 'Lowest level of log records written.'),
  setting('SERVER_ACCESS_LOG', false, parseBool, 'true or false', 'Write one access-log record per call.', { aliases: [alias('SERVER_INTERNAL_LOGGER', KYMA_PY), alias('KYMA_INTERNAL_LOGGER_ENABLED', KUBELESS)] }),
  setting('SERVER_METRICS', true, parseBool, 'true or false', 'Count calls, failures and durations and serve them at SERVER_METRICS_PATH.'),
  setting('SERVER_METRICS_PATH', '/metrics', parsePath, 'a path starting with /', 'Path of the Prometheus metrics endpoint.'),
  setting('SERVER_METRICS_OTLP', false, parseBool, 'true or false', "Export the FaaS metrics over OTLP/HTTP to the trace collector too (TRACE_COLLECTOR_ENDPOINT's host, /v1/metrics) when OTEL_EXPORTER_OTLP_METRICS_ENDPOINT is unset."),
  setting('SERVER_METRICS_PORT', 0, parsePortOrZero, '0 or an integer from 1 to 65535', "Serve SERVER_METRICS_PATH on this port of SERVER_HOST instead of the calls' port (0 = the calls' port)."),
  setting('SERVER_CLOUDEVENTS', true, parseBool, 'true or false', 'Decode incoming CloudEvents (binary and structured); malformed ones get 400.'),
  setting('SERVER_CORS_ORIGINS', [], parseOrigins, 'a comma-separated list of origins such as https://shop.example, or *', 'Origins allowed to call the function from a browser; empty disables CORS.', { defaultDoc: "''" }),
  setting('SERVER_CORS_METHODS', ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'], parseMethods, 'a comma-separated list of HTTP methods', 'Methods a CORS preflight allows.', { defaultDoc: 'GET,HEAD,POST,PUT,PATCH,DELETE' }),
  setting('SERVER_CORS_HEADERS', ['*'], parseHeaderNames, 'a comma-separated list of header names, or *', 'Request headers a CORS preflight allows; * allows what the browser asks for.', { defaultDoc: '*' }),
  setting('SERVER_CORS_MAX_AGE', 600, nonNegativeInt, 'a non-negative integer of seconds', 'Seconds a browser may cache a CORS preflight answer.'),
  setting('SERVER_CORS_CREDENTIALS', false, parseBool, 'true or false', 'Allow cookies and credentials on cross-origin calls (needs explicit origins, not *).'),
  // -- the function's code
  setting('HANDLER_FOLDER', '/', parseFolder, 'a folder path', "Folder holding the function's module. Unset: '/', or '/usr/src/app/function' (where Kyma's Node runtimes mount it) when only that holds the module.", {
    aliases: [alias('HANDLER_PATH', KYMA_NODE), alias('FUNCTION_PATH', KUBELESS), alias('KUBELESS_INSTALL_VOLUME', KUBELESS), alias('AzureWebJobsScriptRoot', AZURE)],
    defaultDoc: "'/' or '/usr/src/app/function'",
    differs: "the second folder looked in is Kyma nodejs' /usr/src/app/function, not /kubeless; HANDLER_PATH may name the file (./function/handler.js), as Kyma's Node runtimes set it",
  }),
  setting('HANDLER_MODULE_NAME', 'handler', parseStr, 'a module name', "Module holding the function: the file name with or without .js, .mjs or .cjs. Unset: 'handler', or 'index' when only index.* exists.", {
    aliases: [alias('HANDLER_MOD_NAME', KYMA_PY), alias('MOD_NAME', KUBELESS)],
    defaultDoc: "'handler' or 'index'", differs: "the second name looked for is index (Node's convention), not main",
  }),
  setting('HANDLER_FUNCTION_NAME', 'main', parseStr, 'a function name or module.function', "Name of the function to call in the module; 'module.function' also sets the module.", {
    aliases: [alias('HANDLER_FUNC_NAME', KYMA_PY), alias('FUNC_HANDLER', KUBELESS), alias('FUNCTION_TARGET', FUNCTIONS_FRAMEWORK)],
  }),
  setting('HANDLER_SIGNATURE', null, optionalChoice(...SIGNATURES), `one of ${SIGNATURES.join(', ')}`, 'Force the calling convention instead of detecting it from the parameters.', { defaultDoc: 'detected' }),
  setting('HANDLER_FRAMEWORK_SIGNATURE', null, optionalChoice(...FRAMEWORK_SIGNATURES), `one of ${FRAMEWORK_SIGNATURES.join(', ')}`, 'How a Functions Framework function is called; unset: as http() or cloudEvent() registered it, else http.', {
    aliases: [alias('FUNCTION_SIGNATURE_TYPE', FUNCTIONS_FRAMEWORK)], defaultDoc: 'as registered',
  }),
  setting('HANDLER_SECRETS_PATH', DEFAULT_SECRET_FOLDERS, parseFolders, "a ':'-separated list of absolute folder paths", 'Folders sdk.secret(name) reads the file name from, the first holding it winning (docs/sdk.md#secrets).', { defaultDoc: DEFAULT_SECRET_FOLDERS.join(':') }),
  setting('HANDLER_PLATFORM', null, optionalChoice(...PLATFORM_NAMES), `one of ${PLATFORM_NAMES.join(', ')}`, 'Force the platform whose contract the function is called with instead of recognising it (docs/platforms.md).', { defaultDoc: 'recognised' }),
  // -- other platforms' signals and their contracts' options (lib/platforms/, docs/platforms.md), as funcwsgi/config.py names them
  setting('LAMBDA_HANDLER', null, parseOptionalStr, 'file.export or dir/file.export', "AWS Lambda's handler string; names the file and export to load.", { aliases: [alias('_HANDLER', AWS_LAMBDA)], defaultDoc: 'unset' }),
  setting('LAMBDA_TASK_ROOT', null, parseOptionalStr, 'a folder path', "Folder AWS Lambda's handler string is relative to.", { defaultDoc: 'unset' }),
  setting('AWS_LAMBDA_FUNCTION_NAME', null, parseOptionalStr, 'a string', 'AWS Lambda function name: context.functionName.', { defaultDoc: 'unset' }),
  setting('AWS_EXECUTION_ENV', null, parseOptionalStr, 'a string', "AWS Lambda's runtime name, such as AWS_Lambda_nodejs22.x.", { defaultDoc: 'unset' }),
  setting('AWS_LAMBDA_FUNCTION_VERSION', '$LATEST', parseStr, 'a string', 'AWS Lambda function version: context.functionVersion.'),
  setting('AWS_LAMBDA_FUNCTION_MEMORY_SIZE', 128, positiveInt, 'a positive integer of megabytes', 'AWS Lambda memory size: context.memoryLimitInMB.'),
  setting('AWS_LAMBDA_LOG_GROUP_NAME', null, parseOptionalStr, 'a string', 'context.logGroupName; unset: /aws/lambda/ and the function name.', { defaultDoc: 'derived' }),
  setting('AWS_LAMBDA_LOG_STREAM_NAME', null, parseOptionalStr, 'a string', 'context.logStreamName; unset: made from the date and process.', { defaultDoc: 'derived' }),
  setting('AWS_REGION', 'us-east-1', parseStr, 'an AWS region name', 'Region in context.invokedFunctionArn.'),
  setting('LAMBDA_PAYLOAD_FORMAT', null, optionalChoice(...LAMBDA_PAYLOAD_FORMATS), '1.0 or 2.0', 'API Gateway payload format of Lambda events: 2.0 (HTTP API, function URLs) or 1.0 (REST API).', { defaultDoc: "template.yaml's event type, else 2.0" }),
  setting('FISSION_USERFUNC_VOLUME', null, parseOptionalStr, 'a folder path', "Folder Fission's fetcher puts the function in; marks a Fission environment.", { aliases: [alias('USERFUNCVOL', FISSION)], defaultDoc: 'unset (/userfunc when it exists)' }),
  setting('FUNCTIONS_WORKER_RUNTIME', null, parseOptionalStr, 'a language name such as node', "Azure Functions' worker language; node marks an Azure Functions app.", { defaultDoc: 'unset' }),
  // -- endpoints the controller injects
  setting('TRACE_COLLECTOR_ENDPOINT', null, parseOptionalStr, 'an OTLP/HTTP URL', 'Where spans are exported (OTLP/HTTP); unset disables tracing.', { defaultDoc: 'unset' }),
  setting('OTEL_EXPORTER_OTLP_METRICS_ENDPOINT', null, parseOptionalStr, 'an OTLP/HTTP URL', 'Where the FaaS metrics (faas.invoke_duration, ...) are exported over OTLP/HTTP, beside /metrics; unset: not exported.', { defaultDoc: 'unset' }),
  setting('PUBLISHER_PROXY_ADDRESS', null, parseOptionalStr, 'a URL', 'Where sdk.emitCloudEvent posts events; unset disables publishing.', { defaultDoc: 'unset' }),
  setting('PUBLISHER_PROXY_TIMEOUT', 10, positiveSeconds, 'a positive number of seconds up to 1000000', 'Seconds sdk.emitCloudEvent waits for the publisher proxy before giving up.'),
  setting('OTEL_PROPAGATORS', DEFAULT_PROPAGATORS, parseList, 'a comma-separated list of propagator names', 'Trace context formats read from calls and written to outgoing requests (tracecontext, baggage, b3, b3multi, none).', { defaultDoc: 'tracecontext,baggage,b3multi' }),
]);

/** The first of the setting's names that is set: main name, then aliases in order. */
function lookup(spec, environ) {
  if (environ[spec.env] !== undefined) return { name: spec.env, raw: environ[spec.env], parse: spec.parse, expected: spec.expected };
  for (const a of spec.aliases) {
    if (environ[a.name] !== undefined) return { name: a.name, raw: environ[a.name], parse: a.parse ?? spec.parse, expected: a.expected ?? spec.expected };
  }
  return null;
}

const copy = (value) => (Array.isArray(value) ? [...value] : value && typeof value === 'object' ? { ...value } : value);

/**
 * Read every setting once from `environ` (default process.env) into a frozen object.
 * `overrides` are field names with already-typed values; they win over the mapping.
 * A bad value throws ConfigError naming the variable, the value and what was expected.
 */
export function fromEnv(environ = process.env, overrides = {}) {
  const values = {};
  const origins = {};
  const known = new Set(SETTINGS.map((s) => s.field));
  const unknown = Object.keys(overrides).filter((k) => !known.has(k));
  if (unknown.length) throw new ConfigError(`unknown setting(s) ${unknown.sort().join(', ')}; known: ${[...known].sort().join(', ')}`);
  for (const spec of SETTINGS) {
    if (spec.field in overrides) {
      values[spec.field] = overrides[spec.field];
      origins[spec.field] = spec.field;
      continue;
    }
    const found = lookup(spec, environ);
    if (found === null) {
      values[spec.field] = copy(spec.default);
      continue;
    }
    try {
      values[spec.field] = found.parse(found.raw);
    } catch {
      throw new ConfigError(`${found.name}=${pyRepr(found.raw)} is invalid: expected ${found.expected}`);
    }
    origins[spec.field] = found.name;
  }
  splitHandlerPath(values, origins);
  splitHandlerString(values, origins);
  findDefaultSources(values, origins);
  // SERVER_QUEUE_TARGET's default never exceeds a shorter call timeout (as funcwsgi/config.py).
  if (!('serverQueueTarget' in origins) && values.serverCallTimeout > 0 && values.serverCallTimeout < values.serverQueueTarget) values.serverQueueTarget = values.serverCallTimeout;
  check(values, origins);
  for (const value of Object.values(values)) if (value && typeof value === 'object') Object.freeze(value);
  Object.defineProperty(values, SET_BY, { value: Object.freeze(origins) });
  return Object.freeze(values);
}

const SET_BY = Symbol('the variable that set each field');

/** The variable that set `field` (HANDLER_FOLDER, or an alias such as FUNCTION_TARGET), or undefined when it has its default. */
export const setBy = (config, field) => config[SET_BY]?.[field];

/**
 * `config` with `changes` (field -> value) applied, frozen again; the fields changed count as set
 * by `by` (a platform's locate() says where a handler came from: `_HANDLER`, `template.yaml`).
 */
export function withValues(config, changes, by) {
  const unknown = Object.keys(changes).filter((key) => !(key in config));
  if (unknown.length) throw new Error(`unknown setting field(s) ${unknown.join(', ')}`);
  const values = { ...config, ...changes };
  const origins = { ...config[SET_BY] };
  if (by !== undefined) for (const key of Object.keys(changes)) origins[key] = by;
  Object.defineProperty(values, SET_BY, { value: Object.freeze(origins) });
  return Object.freeze(values);
}

/** HANDLER_PATH=./function/handler.js, as Kyma's Node runtimes set it: a file, not a folder. */
function splitHandlerPath(values, origins) {
  const given = values.handlerFolder;
  if (origins.handlerFolder === undefined || !MODULE_EXTENSIONS.some((ext) => given.endsWith(ext))) return;
  const module = path.basename(given);
  if (origins.handlerModuleName !== undefined && stripExtension(values.handlerModuleName) !== stripExtension(module)) {
    throw new ConfigError(`${origins.handlerFolder}=${pyRepr(given)} names module ${pyRepr(module)} but ${origins.handlerModuleName}=${pyRepr(values.handlerModuleName)}; set the module in one of them only`);
  }
  values.handlerFolder = path.dirname(given);
  values.handlerModuleName = module;
  origins.handlerModuleName = origins.handlerFolder;
}

/** FUNC_HANDLER=module.function, as Kubeless hands handlers to custom runtimes. */
function splitHandlerString(values, origins) {
  const handler = values.handlerFunctionName;
  if (typeof handler !== 'string' || !handler.includes('.')) return;
  const at = handler.lastIndexOf('.');
  const module = handler.slice(0, at);
  const fn = handler.slice(at + 1);
  const given = origins.handlerFunctionName;
  if (!module || !fn) throw new ConfigError(`${given}=${pyRepr(handler)} is invalid: expected a function name or module.function such as 'handler.main'`);
  if (origins.handlerModuleName !== undefined && stripExtension(values.handlerModuleName) !== module) {
    throw new ConfigError(`${given}=${pyRepr(handler)} names module ${pyRepr(module)} but ${origins.handlerModuleName}=${pyRepr(values.handlerModuleName)}; set the module in one of them only`);
  }
  if (origins.handlerModuleName === undefined) values.handlerModuleName = module;
  values.handlerFunctionName = fn;
  origins.handlerModuleName ??= given;
}

export function stripExtension(name) {
  const ext = MODULE_EXTENSIONS.find((e) => name.endsWith(e));
  return ext ? name.slice(0, -ext.length) : name;
}

/** The module's file in `folder`: `name` as given when it has an ending, else the first of .js, .mjs, .cjs that exists. */
export function moduleFile(folder, name) {
  if (MODULE_EXTENSIONS.some((ext) => name.endsWith(ext))) return path.join(folder, name);
  for (const ext of MODULE_EXTENSIONS) {
    const candidate = path.join(folder, name + ext);
    if (fs.existsSync(candidate)) return candidate;
  }
  return null;
}

/** Fill in the folder and module nothing set, from the files that exist (never second-guessing a setting). */
function findDefaultSources(values, origins) {
  const folders = origins.handlerFolder !== undefined ? [values.handlerFolder] : DEFAULT_FOLDERS;
  const modules = origins.handlerModuleName !== undefined ? [values.handlerModuleName] : DEFAULT_MODULES;
  if (folders.length === 1 && modules.length === 1) return;
  for (const folder of folders) {
    for (const module of modules) {
      if (moduleFile(folder, module) !== null) {
        values.handlerFolder = folder;
        values.handlerModuleName = module;
        return;
      }
    }
  }
}

const isHttpUrl = (url) => { try { const u = new URL(url); return (u.protocol === 'http:' || u.protocol === 'https:') && Boolean(u.host); } catch { return false; } };

/** Refuse contradictory or unusable combinations. */
function check(c, origins = {}) {
  if (!c.handlerModuleName || /[/\\]/.test(c.handlerModuleName) || c.handlerModuleName.startsWith('.')) {
    throw new ConfigError(`HANDLER_MODULE_NAME=${pyRepr(c.handlerModuleName)} is invalid: expected a module file name such as 'handler' or 'handler.mjs'`);
  }
  // FUNCTION_TARGET is the name a function registered with the Functions Framework's http(name, fn): '-' allowed.
  const fromTarget = origins.handlerFunctionName === 'FUNCTION_TARGET' && /^[A-Za-z](?:[-_A-Za-z0-9]{0,61}[A-Za-z0-9])?$/.test(c.handlerFunctionName);
  if (!fromTarget && !/^[A-Za-z_$][\w$]*$/.test(c.handlerFunctionName)) {
    throw new ConfigError(`HANDLER_FUNCTION_NAME=${pyRepr(c.handlerFunctionName)} is invalid: expected a JavaScript identifier such as 'main'`);
  }
  for (const [name, url] of [['TRACE_COLLECTOR_ENDPOINT', c.traceCollectorEndpoint], ['PUBLISHER_PROXY_ADDRESS', c.publisherProxyAddress], ['OTEL_EXPORTER_OTLP_METRICS_ENDPOINT', c.otelExporterOtlpMetricsEndpoint]]) {
    if (url !== null && !isHttpUrl(url)) throw new ConfigError(`${name}=${pyRepr(url)} is invalid: expected an http:// or https:// URL`);
  }
  for (const name of c.otelPropagators) {
    if (!PROPAGATORS.includes(name)) {
      throw new ConfigError(`OTEL_PROPAGATORS=${pyRepr(c.otelPropagators.join(','))} is invalid: no propagator ${pyRepr(name)}; installed: ${[...PROPAGATORS].sort().join(', ')}`);
    }
  }
  if (c.serverMetricsPort && c.serverMetricsPort === c.serverPort) {
    throw new ConfigError(`SERVER_METRICS_PORT=${c.serverMetricsPort} is refused: it is SERVER_PORT; choose another port, or 0 to serve metrics on SERVER_PORT`);
  }
  if (c.serverDebugPort && (c.serverDebugPort === c.serverPort || c.serverDebugPort === c.serverMetricsPort)) {
    throw new ConfigError(`SERVER_DEBUG_PORT=${c.serverDebugPort} is refused: the server already listens there; choose another port`);
  }
  if (c.serverMetricsOtlp && !(c.traceCollectorEndpoint || c.otelExporterOtlpMetricsEndpoint)) {
    throw new ConfigError('SERVER_METRICS_OTLP=true is refused without TRACE_COLLECTOR_ENDPOINT: expected the trace collector to send metrics to, or OTEL_EXPORTER_OTLP_METRICS_ENDPOINT');
  }
  if (c.serverCallTimeout && c.serverQueueTarget > c.serverCallTimeout) {
    throw new ConfigError(`SERVER_QUEUE_TARGET=${c.serverQueueTarget} is invalid: expected at most SERVER_CALL_TIMEOUT (${c.serverCallTimeout}), since a caller waits no longer than a call may take`);
  }
  if (c.serverMaxRequests) {
    throw new ConfigError(`SERVER_MAX_REQUESTS='${c.serverMaxRequests}' is refused with SERVER_ADAPTER='node': only gunicorn recycles a worker after a number of calls`);
  }
  if (c.serverWorkers > 1) {
    throw new ConfigError(`SERVER_WORKERS='${c.serverWorkers}' is refused: nodejs26 serves from one process; run more replicas instead`);
  }
  if (c.serverCorsCredentials && c.serverCorsOrigins.includes('*')) {
    throw new ConfigError("SERVER_CORS_CREDENTIALS=true with SERVER_CORS_ORIGINS='*' is refused: browsers reject credentials for a wildcard origin; list the allowed origins instead");
  }
}

/** The handler file as the start-up line prints it (funcwsgi prints folder/module.py). */
export function handlerPath(config) {
  return moduleFile(config.handlerFolder, config.handlerModuleName) ?? path.join(config.handlerFolder, `${stripExtension(config.handlerModuleName)}.js`);
}

/** Every setting as plain data: what the settings parity test and the docs read. */
export function settingsList() {
  return SETTINGS.map((s) => ({
    env: s.env, field: s.field, default: s.default, expected: s.expected, description: s.description,
    default_doc: s.defaultDoc ?? null, differs: s.differs ?? null,
    aliases: s.aliases.map((a) => ({ name: a.name, origin: a.origin })),
  }));
}
