// One call of a specialised Fission function, as the environment's server.js
// makes it (fission/environments at 45815b42, nodejs/server.js, its generic
// route): `fn(context)` (or `fn()`, or `fn(context, callback)`) with
// context.request and context.response; what it returns, {status, body,
// headers}, sent as Express 5's res.set/res.status/res.send send it; a rejection
// (or a throw) is `500 Internal server error`.
import { STATUS_CODES } from 'node:http';
import { Readable } from 'node:stream';
import { FRAMING_FIELDS, framingField } from '../../call.js';
import { getLogger } from '../../logs.js';
import { invalidJson } from '../../request.js';
import { FunctionResponse } from '../../response.js';

const log = getLogger('funcwsgi.fission');
const FAILED = 'Internal server error';
const HTML = 'text/html';
/** Types whose Express content type carries charset=utf-8 (mime-types' charset(): text/*, and JSON as mime-db marks it). */
const UTF8_TYPES = /^(text\/[^;]+|application\/(json|javascript|[\w.+-]+\+json))$/i;
/** Express's shorthands (mime-types' lookup of an extension) for the names functions use. */
const SHORTHANDS = { html: 'text/html', text: 'text/plain', txt: 'text/plain', json: 'application/json', bin: 'application/octet-stream', xml: 'application/xml', js: 'application/javascript', css: 'text/css', png: 'image/png', jpg: 'image/jpeg', csv: 'text/csv' };
const BODILESS = new Set([204, 304]);

/** A Content-Type as Express's res.set writes it (mime-types' contentType: a shorthand looked up, charset added). */
export function expressContentType(value) {
  let type = String(value);
  if (!type.includes('/')) type = SHORTHANDS[type.replace(/^\./, '').toLowerCase()] ?? type;
  if (!/;\s*charset=/i.test(type) && UTF8_TYPES.test(type.split(';')[0].trim())) type += '; charset=utf-8';
  return type;
}

/** Express's setCharset: the type with charset=utf-8 (replacing another charset). */
function withUtf8(type) {
  const bare = type.split(';').filter((part) => !/^\s*charset=/i.test(part)).join(';').trim();
  return `${bare}; charset=utf-8`;
}

/**
 * {status, headers (flat), data, stream} as Express's res.send would send `body` with `headers` set; the framing
 * fields are the runtime's (a `Connection: close` closes `call`'s connection after the answer).
 */
export function expressAnswer(status, headers, body, call = null) {
  const fields = new Map(); // lower-case name -> [name, values]
  for (const [name, value] of Object.entries(headers ?? {})) {
    const values = Array.isArray(value) ? value.map(String) : [name.toLowerCase() === 'content-type' ? expressContentType(value) : String(value)];
    fields.set(name.toLowerCase(), [name, values]);
  }
  const type = () => fields.get('content-type')?.[1][0];
  const setType = (value) => fields.set('content-type', [fields.get('content-type')?.[0] ?? 'Content-Type', [value]]);
  let data;
  let stream = null;
  if (body instanceof Readable) {
    stream = body;
  } else if (typeof body === 'string') {
    setType(type() === undefined ? `${HTML}; charset=utf-8` : withUtf8(type()));
    data = Buffer.from(body);
  } else if (Buffer.isBuffer(body) || body instanceof Uint8Array) {
    if (type() === undefined) setType('application/octet-stream');
    data = Buffer.from(body);
  } else if (body === null || body === undefined) {
    data = Buffer.alloc(0);
  } else {
    // res.json(): numbers, booleans, objects and arrays as JSON.
    setType(withUtf8(type() ?? 'application/json'));
    data = Buffer.from(JSON.stringify(body));
  }
  if (BODILESS.has(status)) {
    for (const name of ['content-type', 'content-length', 'transfer-encoding']) fields.delete(name);
    data = undefined;
    stream = null;
  }
  const flat = [];
  for (const [lower, [name, values]] of fields) {
    if (FRAMING_FIELDS.has(lower)) {
      if (call !== null) for (const value of values) framingField(call, lower, value);
      continue;
    }
    for (const value of values) flat.push(name, value);
  }
  if (data !== undefined) flat.push('Content-Length', String(data.length));
  return { status, headers: flat, data, stream };
}

/**
 * The body as the environment's four Express parsers leave it: JSON (objects and arrays only, body-parser's
 * strict mode) for application/json, a form object, a string for text/*, a Buffer for
 * application/octet-stream; undefined for any other type or no body.
 */
export function expressBody(req) {
  if (!req.hasBody) return undefined;
  const media = req.mimetype;
  if (media === 'application/json') {
    const text = req.text;
    if (text.trim() === '') return {};
    if (!/^[\s]*[[{]/.test(text)) throw invalidJson();
    return req.json;
  }
  if (media === 'application/x-www-form-urlencoded') return req.form;
  if (media.startsWith('text/')) return req.text;
  if (media === 'application/octet-stream') return req.data;
  return undefined;
}

export class FissionFunction {
  constructor(fn, where) {
    this.fn = fn;
    this.where = where;
    this.withCallback = fn.length > 1;
  }

  call(call) {
    const req = call.req;
    req.params = {}; // the environment's one catch-all route has none; the router sends X-Fission-Params-* headers
    try {
      req.body = expressBody(req); // Express's parsers run before the function: a malformed JSON body is a 400 first
    } catch (error) {
      return void call.fail(error);
    }
    const res = new FunctionResponse(call);
    call.res = res;
    const context = { request: req, response: res };
    const send = (status, body, headers) => {
      if (!status || call.answered) return; // the environment answers nothing without a status
      if (call.overdue()) return;
      let answer;
      try {
        answer = expressAnswer(status, headers, body, call);
      } catch (error) {
        return void this.fail(call, error);
      }
      if (answer.stream !== null) return void call.streamWith(answer.status, answer.headers, answer.stream);
      call.answer(answer.status, answer.headers, call.method === 'HEAD' ? undefined : answer.data, STATUS_CODES[answer.status] ?? 'Unknown');
    };
    if (this.withCallback) {
      try {
        this.fn(context, send);
      } catch (error) {
        this.fail(call, error);
      }
      return;
    }
    let result;
    try {
      result = Promise.resolve(this.fn.length === 0 ? this.fn() : this.fn(context));
    } catch (error) {
      return void this.fail(call, error);
    }
    result.then((value) => {
      const { status, body, headers } = value; // a result that is not an object fails as the environment's destructuring does
      send(status, body, headers);
    }).catch((error) => this.fail(call, error));
  }

  fail(call, error) {
    call.failure ??= 'exception';
    log.log(40, [`${this.where} failed`, error instanceof Error ? error : new Error(String(error))]);
    if (call.answered || call.overdue()) return;
    const body = Buffer.from(FAILED);
    call.answer(500, ['Content-Type', `${HTML}; charset=utf-8`, 'Content-Length', String(body.length)], body, STATUS_CODES[500]);
  }
}
