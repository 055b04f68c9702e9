// The one home of CloudEvents over HTTP in nodejs26 (funcwsgi/cloudevents_compat.py's
// counterpart): decoding incoming events (binary and structured), replying with an
// event (binary), publishing (structured). The events are the `cloudevents` npm
// package's CloudEvent objects.
import { CloudEvent, HTTP } from 'cloudevents';
import { mediaType, STRUCTURED } from './request.js';

export { CloudEvent };
export const BATCH = 'application/cloudevents-batch+json';
const REQUIRED = ['id', 'source', 'specversion', 'type'];

export class MalformedCloudEvent extends Error {}

/** Whether the request claims to be a CloudEvent: a ce- attribute header, or the structured content type. */
export function claimsEvent(headers) {
  return headers['ce-specversion'] !== undefined || headers['ce-id'] !== undefined || headers['ce-type'] !== undefined || headers['ce-source'] !== undefined || mediaType(headers['content-type']) === STRUCTURED;
}

const textual = (media) => media === 'application/json' || media.endsWith('+json') || media.startsWith('text/') || media === 'application/xml';

/** The CloudEvent the request carries; throws MalformedCloudEvent with a short reason. */
export function decode(headers, body) {
  const binary = Object.keys(headers).some((name) => name.startsWith('ce-'));
  let payload;
  if (binary) {
    const missing = REQUIRED.filter((name) => !headers[`ce-${name}`]).map((name) => `ce-${name}`);
    if (missing.length) throw new MalformedCloudEvent(`missing required CloudEvent header(s): ${missing.sort().join(', ')}`);
    const media = mediaType(headers['content-type']);
    payload = !media || textual(media) ? body.toString() : body;
  } else {
    let document;
    try {
      document = JSON.parse(body.toString());
    } catch {
      throw new MalformedCloudEvent('the structured CloudEvent is not valid JSON');
    }
    if (document === null || typeof document !== 'object' || Array.isArray(document)) throw new MalformedCloudEvent('the structured CloudEvent must be a JSON object');
    const missing = REQUIRED.filter((name) => typeof document[name] !== 'string' || !document[name]);
    if (missing.length) throw new MalformedCloudEvent(`missing required CloudEvent attribute(s): ${missing.join(', ')}`);
    payload = body.toString();
  }
  try {
    return HTTP.toEvent({ headers, body: payload });
  } catch (error) {
    throw new MalformedCloudEvent(`invalid CloudEvent: ${error.message}`);
  }
}

/** A CloudEvent of this runtime's `cloudevents`, or of a copy the function installed itself. */
export const isCloudEvent = (value) => value instanceof CloudEvent || (value?.constructor?.name === 'CloudEvent' && typeof value.specversion === 'string' && typeof value.type === 'string' && typeof value.source === 'string');

/** A new event; id, specversion and time are filled in. Throws TypeError for attributes the specification refuses. */
export function makeEvent(attributes, data) {
  const input = { ...attributes };
  if (data !== undefined) input.data = data;
  if (input.datacontenttype === undefined && data !== undefined && data !== null) {
    input.datacontenttype = Buffer.isBuffer(data) ? 'application/octet-stream' : typeof data === 'object' ? 'application/json' : 'text/plain';
  }
  if (Buffer.isBuffer(input.data)) input.data = new Uint8Array(input.data);
  try {
    return new CloudEvent(input);
  } catch (error) {
    throw new TypeError(`invalid CloudEvent attributes ${Object.keys(attributes).sort().join(', ')}: ${error.message}`);
  }
}

/** { headers, body: Buffer } of the event in binary content mode. */
export function toBinary(event) {
  const message = HTTP.binary(event);
  return { headers: message.headers, body: toBuffer(message.body) };
}

/** { headers, body: Buffer } of the event in structured content mode. */
export function toStructured(event) {
  const message = HTTP.structured(event);
  return { headers: message.headers, body: toBuffer(message.body) };
}

function toBuffer(body) {
  if (body === undefined || body === null) return Buffer.alloc(0);
  if (typeof body === 'string') return Buffer.from(body);
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  return Buffer.from(JSON.stringify(body));
}

/** The event's context attributes as strings, without data: what a function usually reads. */
export function attributesOf(event) {
  const result = {};
  for (const [name, value] of Object.entries(event.toJSON ? event.toJSON() : event)) {
    if (name !== 'data' && name !== 'data_base64' && value !== undefined) result[name] = String(value);
  }
  return result;
}
