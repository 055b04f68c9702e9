// The request a function receives: the rework's names (method, path, query,
// headers, getData(), json, text, form, cloudEvent) and the subset of Express's
// request that Kyma's nodejs26 functions use (req.body parsed by content type,
// req.query, req.params, req.get(), req.is(), req.headers), on one object.
// The body has been read before the function runs; every parse is lazy.
// The target reads as Kyma's nodejs26 gives it through its one route,
// app.all('*path') on Express 5: req.path the raw pathname, req.params.path the
// pathname's segments decoded, req.query node:querystring's (Express's 'simple'
// query parser), req.get() Express's own checks.

import { parse as parseQuery } from 'node:querystring';

export const STRUCTURED = 'application/cloudevents+json';

/** An error that answers with its own status (the Node form of werkzeug's HTTPException). */
export class HttpError extends Error {
  constructor(status, reason, description) {
    super(description ? `${reason}: ${description}` : reason);
    this.status = status;
    this.reason = reason;
  }
}

export const invalidJson = () => new HttpError(400, 'Bad Request', 'The request body is not valid JSON.');

/** The media type of a Content-Type value, lower case, without parameters. */
export function mediaType(value) {
  if (!value) return '';
  const at = value.indexOf(';');
  return (at < 0 ? value : value.slice(0, at)).trim().toLowerCase();
}

function charsetOf(value) {
  const match = /;\s*charset="?([^";]+)"?/i.exec(value ?? '');
  return match ? match[1].toLowerCase() : 'utf-8';
}

/** URLSearchParams as Express's `req.query` gives them: a repeated name is an array. */
export function paramsObject(params) {
  const result = {};
  for (const [name, value] of params) {
    const seen = result[name];
    if (seen === undefined) result[name] = value;
    else if (Array.isArray(seen)) seen.push(value);
    else result[name] = [seen, value];
  }
  return result;
}

const TYPE_SHORTHANDS = { json: 'application/json', text: 'text/plain', html: 'text/html', urlencoded: 'application/x-www-form-urlencoded', multipart: 'multipart/*', xml: 'application/xml', bin: 'application/octet-stream' };

/** Whether `media` matches `pattern` as Express's req.is() does ('json', 'text/*', '+json', 'application/json'). */
export function typeMatches(media, pattern) {
  let wanted = TYPE_SHORTHANDS[pattern] ?? pattern.toLowerCase();
  if (wanted.startsWith('+')) return media.endsWith(wanted);
  if (wanted.startsWith('*/')) wanted = wanted.slice(1);
  if (wanted.endsWith('/*')) return media.startsWith(wanted.slice(0, -1));
  if (wanted.startsWith('/')) return media.endsWith(wanted);
  if (!wanted.includes('/')) return media.split('/')[1] === wanted || media.endsWith(`+${wanted}`);
  return media === wanted;
}

const NOT_PARSED = Symbol('not parsed');

/** A path segment decoded as Express's router decodes a route parameter; one that does not decode is a 400. */
function decodeSegment(segment) {
  if (!segment.includes('%')) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new HttpError(400, 'Bad Request', 'The request path is not valid percent-encoding.');
  }
}

export class FunctionRequest {
  /**
   * @param {import('node:http').IncomingMessage} incoming
   * @param {Buffer | null} data the body as read (null when the request had none)
   */
  constructor(incoming, data, call) {
    this.raw = incoming;
    this.method = incoming.method;
    this.url = incoming.url;
    this.originalUrl = incoming.url;
    this.headers = incoming.headers;
    this.data = data ?? EMPTY;
    this.hasBody = data !== null;
    this.call = call;
    this._params = null;
    this._path = null;
    this._query = null;
    this._args = null;
    this._body = NOT_PARSED;
    this._json = NOT_PARSED;
  }

  // -- the target ---------------------------------------------------------------
  /**
   * Express's req.params through Kyma's catch-all route '*path': { path: the pathname's
   * segments, each decoded } ('/' is ['', '']). A segment that does not decode answers 400.
   */
  get params() {
    if (this._params === null) this._params = { path: this.path.split('/').map(decodeSegment) };
    return this._params;
  }

  set params(value) { this._params = value; }

  get queryString() {
    const at = this.url.indexOf('?');
    return at < 0 ? '' : this.url.slice(at + 1);
  }

  /** Express's req.path: the pathname as sent, not decoded. */
  get path() {
    if (this._path === null) {
      const at = this.url.indexOf('?');
      this._path = at < 0 ? this.url : this.url.slice(0, at);
    }
    return this._path;
  }

  set path(value) { this._path = value; }

  /** The query as URLSearchParams (getAll() for repeated names): Python's req.args. */
  get args() {
    if (this._args === null) this._args = new URLSearchParams(this.queryString);
    return this._args;
  }

  /** The query as Express 5 gives it (node:querystring): { name: value } or { name: [values] } when repeated. */
  get query() {
    if (this._query === null) this._query = parseQuery(this.queryString);
    return this._query;
  }

  set query(value) { this._query = value; }

  get ip() { return this.raw.socket?.remoteAddress; }
  get hostname() { return (this.headers.host ?? '').replace(/:\d+$/, ''); }
  get host() { return this.headers.host; }
  get protocol() { return this.raw.socket?.encrypted ? 'https' : 'http'; }
  get secure() { return this.protocol === 'https'; }
  get xhr() { return (this.headers['x-requested-with'] ?? '').toLowerCase() === 'xmlhttprequest'; }
  get socket() { return this.raw.socket; }
  get httpVersion() { return this.raw.httpVersion; }

  // -- headers --------------------------------------------------------------------
  /** A header's value, any case (Express's req.get, its errors too); 'referrer' and 'referer' are one. */
  get(name) {
    if (!name) throw new TypeError('name argument is required to req.get');
    if (typeof name !== 'string') throw new TypeError('name must be a string to req.get');
    const lower = name.toLowerCase();
    if (lower === 'referer' || lower === 'referrer') return this.headers.referrer || this.headers.referer;
    return this.headers[lower];
  }

  header(name) { return this.get(name); }

  get contentType() { return this.headers['content-type']; }
  get mimetype() { return mediaType(this.headers['content-type']); }

  /** The first of `types` the body's content type matches, else false (null without a body), as Express's req.is. */
  is(...types) {
    const list = types.flat();
    if (!this.hasBody) return null;
    const media = this.mimetype;
    if (!media) return false;
    if (list.length === 0) return media;
    return list.find((pattern) => typeMatches(media, pattern)) ?? false;
  }

  // -- the body ---------------------------------------------------------------------
  /** The raw body bytes (Python's req.get_data()). */
  getData() { return this.data; }
  get_data() { return this.data; }
  get rawBody() { return this.data; }

  get text() { return this.data.toString(charsetOf(this.headers['content-type']) === 'latin1' ? 'latin1' : 'utf8'); }

  /** The body parsed as JSON (any content type); a body that is not JSON answers 400. */
  get json() {
    if (this._json === NOT_PARSED) {
      if (this.data.length === 0) this._json = null;
      else {
        try { this._json = JSON.parse(this.text); } catch { throw invalidJson(); }
      }
    }
    return this._json;
  }

  getJson() { return this.json; }
  get_json() { return this.json; }

  /** A urlencoded form as an object (repeated names are arrays). */
  get form() {
    return this.mimetype === 'application/x-www-form-urlencoded' ? paramsObject(new URLSearchParams(this.text)) : {};
  }

  /**
   * The body parsed by content type, as Kyma's Express runtime gives it: JSON for
   * application/json and application/cloudevents+json, a string for text/*, an
   * object for a urlencoded form, a Buffer for anything else, undefined without a body.
   */
  get body() {
    if (this._body === NOT_PARSED) this._body = this.parseBody();
    return this._body;
  }

  set body(value) { this._body = value; }

  parseBody() {
    if (!this.hasBody) return undefined;
    const media = this.mimetype;
    if (media === 'application/json' || media === STRUCTURED) {
      if (this.data.length === 0) return {};
      try { return JSON.parse(this.text); } catch { throw invalidJson(); }
    }
    if (media.startsWith('text/')) return this.text;
    if (media === 'application/x-www-form-urlencoded') return this.form;
    return this.data;
  }

  /** Aborted when the call times out or the client goes away: hand it to fetch() and timers. */
  get signal() { return this.call?.signal; }

  /** The incoming CloudEvent (binary or structured), or null. */
  get cloudEvent() { return this.call?.cloudEvent ?? null; }
  get cloud_event() { return this.cloudEvent; }
}

const EMPTY = Buffer.alloc(0);
