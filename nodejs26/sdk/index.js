// What a function imports: `import { getTracer, emitCloudEvent } from 'sdk'` or
// `const sdk = require('sdk')`. The runtime resolves the name 'sdk' to this file
// itself (sdk/register.js), so a function installs nothing. The same functions as
// funcwsgi's Python sdk, in camelCase, and the names of Kyma nodejs26's sdk.
//
// Usable without a server, so a function's unit tests can call it: the tracer is
// then a no-op one, getRequest() and getCloudEvent() return null, the metadata
// comes from the environment, publishing rejects with PublisherNotConfigured
// unless PUBLISHER_PROXY_ADDRESS is set, and secret() reads the folders of
// HANDLER_SECRETS_PATH in the environment.
import fs from 'node:fs';
import path from 'node:path';
import { context, propagation, trace } from '@opentelemetry/api';
import { currentCall } from '../lib/calls.js';
import { decode, isCloudEvent, makeEvent, toStructured } from '../lib/cloudevents.js';
import { fromEnv } from '../lib/config.js';
import { getLogger as namedLogger, OncePerBurst } from '../lib/logs.js';

export const LOGGER_NAME = 'function';
export const TRACER_NAME = 'sdk';

/** Trace headers of the call, forwarded as they came when no span of ours is active (tracing off). */
const TRACE_HEADERS = ['traceparent', 'tracestate', 'baggage', 'b3', 'x-b3-traceid', 'x-b3-spanid', 'x-b3-parentspanid', 'x-b3-sampled', 'x-b3-flags'];

export class PublishError extends Error {
  /** `status` and `body` hold the proxy's answer, if any. */
  constructor(message, status = null, body = '') {
    super(message);
    this.name = new.target.name;
    this.status = status;
    this.body = body;
  }
}

/** PUBLISHER_PROXY_ADDRESS is not set, so there is nowhere to publish to. */
export class PublisherNotConfigured extends PublishError {}

let active = null;

/** The runtime hands its configuration over once; outside a server it is read from the environment. */
export function setActiveConfig(config) {
  active = config;
}

/** In a server, what it read at start-up; outside one, the environment at each call (a test may set it). */
function config() {
  return active ?? fromEnv(process.env);
}

// -- the call --------------------------------------------------------------------------

/** The request of the call being served, or null outside a call. */
export function getRequest() {
  return currentCall.getStore()?.req ?? null;
}

/**
 * The CloudEvent the call carries (binary or structured mode), or null; a
 * `cloudevents` CloudEvent. Given a request (Kyma nodejs26's getCloudEvent(req)),
 * that request's event.
 */
export function getCloudEvent(req) {
  if (req !== undefined && req !== null) {
    if (req.call !== undefined) return req.call.cloudEvent;
    try {
      return decode(req.headers, Buffer.isBuffer(req.body) ? req.body : Buffer.from(typeof req.body === 'string' ? req.body : JSON.stringify(req.body ?? null)));
    } catch {
      return null;
    }
  }
  return currentCall.getStore()?.cloudEvent ?? null;
}

/**
 * Whether nobody waits for the call any more: its client left before the answer was
 * complete, or it timed out (req.signal is aborted at the same moments). false outside a call.
 */
export function cancelled() {
  return (currentCall.getStore()?.cancelledNow() ?? null) !== null;
}

// -- telemetry --------------------------------------------------------------------------

/** An OpenTelemetry tracer; its spans are children of the call's span (a no-op tracer without tracing). */
export function getTracer() {
  return trace.getTracer(TRACER_NAME);
}

/** The function's logger: logger.info('message', { field: 1 }); in a server its records are JSON lines with the call's ids. */
export function getLogger() {
  return namedLogger(LOGGER_NAME);
}

// -- events -----------------------------------------------------------------------------

/**
 * Publish a new CloudEvent of `type` from `source` carrying `data`; a promise.
 * `optionalAttributes` adds attributes (subject, datacontenttype, extensions...);
 * id, specversion and time are filled in. Rejects as publishCloudEvent does, and
 * with a TypeError for attributes the CloudEvents specification refuses.
 */
export async function emitCloudEvent(type, source, data, optionalAttributes) {
  return publishCloudEvent(makeEvent({ type, source, ...(optionalAttributes ?? {}) }, data));
}

const publishFailures = new OncePerBurst(namedLogger('funcwsgi.publisher'));

/**
 * POST a CloudEvent to PUBLISHER_PROXY_ADDRESS in structured mode; a promise.
 * `event` is a `cloudevents` CloudEvent or an object of its attributes with an
 * optional `data`. The call's trace context travels with it. Rejects with
 * PublisherNotConfigured when the address is unset, and PublishError when the
 * proxy cannot be reached within PUBLISHER_PROXY_TIMEOUT seconds or answers other
 * than 2xx (`status` and `body` then hold its answer).
 */
export async function publishCloudEvent(event) {
  const { publisherProxyAddress: address, publisherProxyTimeout: timeout } = config();
  if (!address) throw new PublisherNotConfigured('cannot publish the CloudEvent: PUBLISHER_PROXY_ADDRESS is not set (expected the URL of the publisher proxy)');
  if (!isCloudEvent(event)) {
    if (event === null || typeof event !== 'object') throw new TypeError(`publishCloudEvent() needs a CloudEvent or an object of its attributes, got a ${event === null ? 'null' : typeof event}`);
    const { data, ...attributes } = event;
    event = makeEvent(attributes, data);
  }
  const { headers, body } = toStructured(event);
  addTraceContext(headers);
  // Sent for the call, it stops when the call is cancelled: no one waits for what it would start.
  const call = currentCall.getStore();
  if (call !== undefined && call.cancelledNow() !== null) throw notPublished(call);
  const signal = call === undefined ? AbortSignal.timeout(timeout * 1000) : AbortSignal.any([AbortSignal.timeout(timeout * 1000), call.signal]);
  let response;
  try {
    response = await fetch(address, { method: 'POST', headers, body, signal });
  } catch (error) {
    if (call !== undefined && call.cancelCause() !== null) throw notPublished(call);
    const kind = error?.name === 'TimeoutError' ? 'TimeoutError' : error?.cause?.code ?? error?.name ?? 'Error';
    publishFailures.warning(`cannot publish the CloudEvent to ${address}: ${kind}`);
    throw new PublishError(`cannot publish the CloudEvent to ${address}: ${kind}: ${error?.cause?.message ?? error?.message}`);
  }
  if (response.status < 200 || response.status >= 300) {
    const text = (await response.text().catch(() => '')).slice(0, 1000);
    publishFailures.warning(`cannot publish the CloudEvent to ${address}: the proxy answered ${response.status}`);
    throw new PublishError(`the publisher proxy at ${address} answered ${response.status}: ${text}`, response.status, text);
  }
  await response.arrayBuffer().catch(() => {});
}

function notPublished(call) {
  return new PublishError(`the CloudEvent was not published: the call was cancelled (${call.cancelCause() === 'timeout' ? 'it timed out' : 'its client left'})`);
}

function addTraceContext(headers) {
  if (trace.getActiveSpan()?.isRecording()) {
    propagation.inject(context.active(), headers);
    return;
  }
  const incoming = currentCall.getStore()?.incoming.headers;
  if (incoming === undefined) return;
  for (const name of TRACE_HEADERS) if (incoming[name] !== undefined) headers[name] = incoming[name];
}

// -- secrets ---------------------------------------------------------------------------

/** No folder of HANDLER_SECRETS_PATH holds the secret (the message names it and every folder). */
export class SecretNotFound extends Error {
  constructor(message) {
    super(message);
    this.name = 'SecretNotFound';
  }
}

/** path -> { key, text }: what was read last, to read a file again only when it changed (a rotated mount). */
const secrets = new Map();

/**
 * The text of the secret file `name` from the first folder of HANDLER_SECRETS_PATH
 * holding it, one trailing newline removed; read again when the file changed (a
 * Kubernetes secret rotates by swapping its folder's ..data link). Throws
 * SecretNotFound naming the secret and every folder searched (never a value),
 * and a TypeError for a name with a '/'.
 */
export function secret(name) {
  if (typeof name !== 'string' || name === '' || name === '.' || name === '..' || name.includes('/') || name.includes('\0')) {
    throw new TypeError(`secret name ${JSON.stringify(name)} is invalid: expected a file name such as 'db-password', without '/'`);
  }
  const folders = config().handlerSecretsPath;
  for (const folder of folders) {
    const file = path.join(folder, name);
    let status;
    try {
      status = fs.statSync(file, { bigint: true });
    } catch {
      continue;
    }
    const key = `${status.ino}:${status.size}:${status.mtimeNs}`;
    const cached = secrets.get(file);
    if (cached?.key === key) return cached.text;
    let text;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (error) {
      throw new SecretNotFound(`secret '${name}' at ${file} cannot be read: ${error.code ?? error.message}`);
    }
    text = text.endsWith('\r\n') ? text.slice(0, -2) : text.endsWith('\n') ? text.slice(0, -1) : text;
    secrets.set(file, { key, text });
    return text;
  }
  const where = folders.length ? folders.join(', ') : 'no folder (HANDLER_SECRETS_PATH is empty)';
  throw new SecretNotFound(`secret '${name}' not found: no file '${name}' in ${where} (HANDLER_SECRETS_PATH)`);
}

// -- metadata ---------------------------------------------------------------------------

/** FUNC_NAME. */
export const getFunctionName = () => config().funcName;
/** FUNC_NAMESPACE. */
export const getNamespace = () => config().funcNamespace;
/** FUNC_RUNTIME (nodejs26 unless set). */
export const getRuntime = () => config().funcRuntime;
/** Seconds a call may take (SERVER_CALL_TIMEOUT). */
export const getTimeout = () => config().serverCallTimeout;
/** The largest request body accepted, in megabytes as Kyma counts them (0 = no limit). */
export const getBodySizeLimit = () => config().serverMaxBodySize / (1024 * 1024);
/** The function's labels (FUNC_LABELS), a copy. */
export const getLabels = () => ({ ...config().funcLabels });
/** The function's annotations (FUNC_ANNOTATIONS), a copy. */
export const getAnnotations = () => ({ ...config().funcAnnotations });

export default {
  cancelled, getRequest, getCloudEvent, getTracer, getLogger, emitCloudEvent, publishCloudEvent, getFunctionName, getNamespace, getRuntime, getTimeout, getBodySizeLimit, getLabels, getAnnotations, PublishError, PublisherNotConfigured, secret, SecretNotFound,
};
