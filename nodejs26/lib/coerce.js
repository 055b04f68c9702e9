// Return values as HTTP bodies, the same rules as funcwsgi/response.py:
// string -> text/plain; charset=utf-8, Buffer/Uint8Array -> application/octet-stream,
// object/array (and numbers, booleans) -> JSON, null/undefined -> res's body (or
// empty), an async iterable / Node stream / iterator / ReadableStream -> streamed
// chunks. A WHATWG Response and a CloudEvent are handled by the caller (call.js).
import { BINARY, JSON_TYPE, TEXT } from './response.js';

export class UnsupportedResponse extends TypeError {}

const EMPTY = Buffer.alloc(0);

export function isStream(value) {
  return typeof value[Symbol.asyncIterator] === 'function' || (typeof value.next === 'function' && typeof value[Symbol.iterator] === 'function');
}

/** { data: Buffer or string } or { stream: iterable }, with the default content type. */
export function encodeBody(body) {
  switch (typeof body) {
    case 'string':
      // Kept a string: node:http then sends the head and a small body in one write.
      return { data: body, contentType: TEXT };
    case 'undefined':
      return { data: EMPTY, contentType: TEXT };
    case 'number':
    case 'boolean':
      return { data: Buffer.from(JSON.stringify(body)), contentType: JSON_TYPE };
    case 'object':
      if (body === null) return { data: EMPTY, contentType: TEXT };
      if (body instanceof Uint8Array) return { data: Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength), contentType: BINARY };
      if (body instanceof ArrayBuffer) return { data: Buffer.from(body), contentType: BINARY };
      if (ArrayBuffer.isView(body)) return { data: Buffer.from(body.buffer, body.byteOffset, body.byteLength), contentType: BINARY };
      if (Array.isArray(body)) return { data: Buffer.from(JSON.stringify(body)), contentType: JSON_TYPE };
      if (isStream(body)) return { stream: body, contentType: TEXT };
      return { data: Buffer.from(JSON.stringify(body) ?? 'null'), contentType: JSON_TYPE };
    default: {
      const kind = typeof body === 'function' ? `function ${body.name || '(anonymous)'}` : typeof body;
      throw new UnsupportedResponse(`the function returned a ${kind}, which cannot be a response body; return a string, a Buffer, an object or array, a Response, a CloudEvent or an async iterable`);
    }
  }
}

/** One streamed chunk as bytes. */
export function chunkBytes(chunk) {
  if (typeof chunk === 'string') return Buffer.from(chunk);
  if (chunk instanceof Uint8Array) return chunk;
  if (ArrayBuffer.isView(chunk)) return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  throw new UnsupportedResponse(`a streamed chunk is a ${chunk === null ? 'null' : typeof chunk}; stream strings or Buffers`);
}
