// What main(req, res) receives as `res`: one object with the rework's names
// (setCode/set_code, setHeader/set_header, setBody, setText, setJson, setData)
// and the subset of Express's response Kyma's nodejs26 functions use
// (status().send(), json(), set(), end(), sendStatus(), write()).
//
// The rework's setters only record; the runtime sends what they recorded when
// the function returns (or its promise settles). Express's senders (send, json,
// end, sendStatus, redirect) answer at once, as in Express, so a function may
// answer from a callback after it returned.
import { STATUS_CODES } from 'node:http';
import { getLogger } from './logs.js';

const log = getLogger('funcwsgi');

export const TEXT = 'text/plain; charset=utf-8';
export const JSON_TYPE = 'application/json';
export const BINARY = 'application/octet-stream';

const TYPES = { json: JSON_TYPE, text: TEXT, txt: TEXT, html: 'text/html; charset=utf-8', xml: 'application/xml', bin: BINARY, octet: BINARY, form: 'application/x-www-form-urlencoded', urlencoded: 'application/x-www-form-urlencoded', js: 'text/javascript; charset=utf-8', css: 'text/css; charset=utf-8', png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', gif: 'image/gif', svg: 'image/svg+xml', pdf: 'application/pdf', csv: 'text/csv; charset=utf-8' };

/** A content type from Express's shorthand ('json', '.html') or a full type. */
export function contentTypeOf(type) {
  const key = String(type).replace(/^\./, '').toLowerCase();
  return String(type).includes('/') ? String(type) : TYPES[key] ?? BINARY;
}

export function checkStatus(code) {
  if (!Number.isInteger(code) || code < 100 || code > 999) {
    throw new TypeError(`status code must be an integer from 100 to 999, got ${typeof code === 'string' ? `'${code}'` : String(code)}`);
  }
  return code;
}

const headerValue = (value) => (Array.isArray(value) ? value.map(String) : String(value));

// Express's res.location() and res.redirect() percent-encode the URL as its encodeurl package does
// (encodeurl 2.0.0): what is not allowed in a URL is encoded, a %XX already there is kept.
const ENCODE_CHARS = /(?:[^\x21\x23-\x3B\x3D\x3F-\x5F\x61-\x7A\x7C\x7E]|%(?:[^0-9A-Fa-f]|[0-9A-Fa-f][^0-9A-Fa-f]|$))+/g;
const UNMATCHED_SURROGATE = /(^|[^\uD800-\uDBFF])[\uDC00-\uDFFF]|[\uD800-\uDBFF]([^\uDC00-\uDFFF]|$)/g;
export const encodeUrl = (url) => String(url).replace(UNMATCHED_SURROGATE, '$1\uFFFD$2').replace(ENCODE_CHARS, encodeURI);

export class FunctionResponse {
  constructor(call) {
    this.call = call;
    this.statusCode = 200;
    this._headers = null;
    /** The body as set so far: anything a function may return (coerced when sent). */
    this.body = undefined;
    /** Whether the function has said anything through this object (see Call.settle). */
    this.touched = false;
    this.warnedLate = false;
    this._locals = null;
  }

  /** Express's res.locals, made on first use. */
  get locals() {
    if (this._locals === null) this._locals = {};
    return this._locals;
  }

  set locals(value) { this._locals = value; }

  // -- status ----------------------------------------------------------------------
  setCode(code) {
    this.statusCode = checkStatus(code);
    this.touched = true;
    return this;
  }

  set_code(code) { return this.setCode(code); }
  /** Express's res.status(code). */
  status(code) { return this.setCode(code); }

  // -- headers ---------------------------------------------------------------------
  /** The headers set so far, a WHATWG Headers object (mutable). */
  get headers() {
    this.touched = true;
    if (this._headers === null) this._headers = new Headers();
    return this._headers;
  }

  setHeader(name, value) {
    const headers = this.headers;
    if (Array.isArray(value)) {
      headers.delete(name);
      for (const item of value) headers.append(name, String(item));
    } else headers.set(name, String(value));
    return this;
  }

  set_header(name, value) { return this.setHeader(name, value); }

  addHeader(name, value) {
    this.headers.append(name, String(value));
    return this;
  }

  add_header(name, value) { return this.addHeader(name, value); }
  /** Express's res.append(name, value). */
  append(name, value) {
    for (const item of [value].flat()) this.addHeader(name, item);
    return this;
  }

  /** Express's res.set(name, value) or res.set({ name: value }); also res.header(). */
  set(name, value) {
    if (name !== null && typeof name === 'object') {
      for (const [key, item] of Object.entries(name)) this.set(key, item);
      return this;
    }
    if (name.toLowerCase() === 'content-type' && !Array.isArray(value)) return this.setHeader(name, contentTypeOf(value));
    return this.setHeader(name, headerValue(value));
  }

  header(name, value) { return this.set(name, value); }
  getHeader(name) { return this._headers?.get(name) ?? undefined; }
  /** Express's res.get(name). */
  get(name) { return this.getHeader(name); }
  hasHeader(name) { return this._headers?.has(name) ?? false; }
  removeHeader(name) { this._headers?.delete(name); return this; }
  getHeaders() { return this._headers ? Object.fromEntries(this._headers) : {}; }
  getHeaderNames() { return this._headers ? [...this._headers.keys()] : []; }

  get contentType() { return this.getHeader('content-type'); }
  set contentType(value) { this.setHeader('Content-Type', value); }
  /** Express's res.type('json'). */
  type(value) { return this.setHeader('Content-Type', contentTypeOf(value)); }

  // -- the body, recorded ------------------------------------------------------------
  /** Set the body; coerced as a return value is (string text, Buffer bytes, object JSON, stream). */
  setBody(body) {
    this.body = body;
    this.touched = true;
    return this;
  }

  set_body(body) { return this.setBody(body); }

  setText(text, contentType = TEXT) {
    this.setHeader('Content-Type', contentType);
    return this.setBody(String(text));
  }

  set_text(text, contentType) { return this.setText(text, contentType); }

  setJson(value) {
    this.setHeader('Content-Type', JSON_TYPE);
    return this.setBody(Buffer.from(JSON.stringify(value) ?? 'null'));
  }

  set_json(value) { return this.setJson(value); }

  setData(data, contentType = BINARY) {
    this.setHeader('Content-Type', contentType);
    return this.setBody(Buffer.from(data));
  }

  set_data(data, contentType) { return this.setData(data, contentType); }

  // -- Express's senders: they answer now --------------------------------------------
  /** A sender called after the call was answered (by the return value, a timeout, an earlier send): said once, ignored. */
  late(what) {
    if (!this.call.answered || this.call.streaming) return false;
    if (!this.warnedLate && !this.call.refusing) { // after a refused head, its log line says it all
      this.warnedLate = true;
      log.warning(`res.${what}() on ${this.call.method} ${this.call.path} after the call was answered (${this.call.failure === 'timeout' ? 'it timed out' : 'by the return value or an earlier answer'}); ignored`);
    }
    return true;
  }

  send(body) {
    if (this.late('send')) return this;
    if (body !== undefined) this.setBody(body);
    this.touched = true;
    this.call.answerWith(undefined, this);
    return this;
  }

  json(value) {
    if (this.late('json')) return this;
    this.setJson(value);
    this.call.answerWith(undefined, this);
    return this;
  }

  sendStatus(code) {
    this.setCode(code);
    return this.setText(STATUS_CODES[code] ?? String(code)).send();
  }

  redirect(status, url) {
    if (url === undefined) [status, url] = [302, status];
    const address = encodeUrl(url);
    this.setCode(status).setHeader('Location', address);
    return this.setText(`${STATUS_CODES[status] ?? 'Redirecting'}. Redirecting to ${address}`).send();
  }

  location(url) { return this.setHeader('Location', encodeUrl(url)); }

  /** Streams a chunk: the status and headers go first; end() finishes the response. */
  write(chunk, encoding) {
    this.touched = true;
    return this.call.writeChunk(this, chunk, encoding);
  }

  end(body, encoding) {
    if (this.late('end')) return this;
    this.touched = true;
    if (typeof body === 'function') body = undefined; // end(callback), as node:http allows
    if (this.call.streaming) return this.call.endStream(body, encoding), this;
    if (body !== undefined) this.setBody(typeof body === 'string' && encoding ? Buffer.from(body, encoding) : body);
    this.call.answerWith(undefined, this);
    return this;
  }

  get headersSent() { return this.call.answered; }
  get writableEnded() { return this.call.ended; }
  get finished() { return this.call.ended; }
  get req() { return this.call.req; }

  on(event, listener) { this.call.outgoing.on(event, listener); return this; }
  once(event, listener) { this.call.outgoing.once(event, listener); return this; }
}
