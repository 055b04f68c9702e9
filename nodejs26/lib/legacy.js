// The main(event, context) contract of Kyma's nodejs20-24 runtimes (and of Kyma
// <=3.12 and Kubeless), as those runtimes built it: `event.data` (the body parsed
// by content type, or the CloudEvent's data), the `ce-*` keys, `event.extensions`
// with the request and response, the response helpers, publishing through the sdk
// and `event.tracer`; `context` with the function's metadata. A third argument,
// Kyma's sendResponse(body, status, headers), answers from a callback.
import fs from 'node:fs';
import { attributesOf } from './cloudevents.js';
import { getLogger } from './logs.js';
import * as sdk from '../sdk/index.js';

const log = getLogger('funcwsgi.legacy');
const warned = new Set();

function deprecated(name, instead) {
  if (warned.has(name)) return;
  warned.add(name);
  log.warning(`event.${name} is deprecated and will be removed; use ${instead}`);
}

/** The `context` argument; the same values for every call, so made once (each call gets a copy). */
export function buildContext(config, functionName) {
  const bytes = config.serverMaxBodySize;
  return Object.freeze({
    'function-name': config.funcName || functionName,
    namespace: config.funcNamespace,
    timeout: config.serverCallTimeout,
    runtime: config.funcRuntime,
    'memory-limit': config.funcMemoryLimit || memoryLimit(),
    'body-size-limit': bytes / (1024 * 1024),
  });
}

export function buildEvent(call, req, res) {
  const event = {
    extensions: { request: req, response: res },
    setResponseHeader: (key, value) => { res.set(key, value); },
    setResponseContentType: (type) => { res.type(type); },
    setResponseStatus: (status) => { res.status(status); },
    emitCloudEvent: (type, source, data, optionalCloudEventAttributes) => sdk.emitCloudEvent(type, source, data, optionalCloudEventAttributes),
    publishCloudEvent: (data) => {
      deprecated('publishCloudEvent', 'emitCloudEvent(type, source, data, optionalAttributes)');
      const given = Object.fromEntries(Object.entries(data ?? {}).filter(([, value]) => value !== undefined && value !== null));
      return sdk.publishCloudEvent(given);
    },
    buildResponseCloudEvent: (id, type, data) => {
      deprecated('buildResponseCloudEvent', 'emitCloudEvent(type, source, data, optionalAttributes)');
      return { type, source: req.get('ce-source'), eventtypeversion: req.get('ce-eventtypeversion'), specversion: req.get('ce-specversion'), id, data, datacontenttype: typeof data === 'object' ? 'application/json' : typeof data === 'string' ? 'text/plain' : undefined };
    },
  };
  Object.defineProperty(event, 'tracer', { get: () => sdk.getTracer(), enumerable: true });
  for (const [name, value] of Object.entries(req.headers)) if (name.startsWith('ce-')) event[name] = value;
  if (call.cloudEvent !== null) {
    for (const [name, value] of Object.entries(attributesOf(call.cloudEvent))) event[`ce-${name}`] = value;
    event.data = call.cloudEvent.data;
  } else if (req.hasBody && !req.mimetype.startsWith('multipart/')) {
    event.data = req.body; // throws the 400 for a JSON body that is not JSON, before the function runs
  }
  return event;
}

/** The container's memory limit as the cgroup reports it; '' when unlimited. */
function memoryLimit() {
  for (const file of ['/sys/fs/cgroup/memory.max', '/sys/fs/cgroup/memory/memory.limit_in_bytes']) {
    try {
      const value = fs.readFileSync(file, 'utf8').trim();
      return value === 'max' ? '' : value;
    } catch {
      // not this cgroup version
    }
  }
  return '';
}
