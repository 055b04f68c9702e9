// One call: the node:http request and response, what the function answered,
// and the runtime's own answers (500, 408, 400). Whatever happens, the client
// gets exactly one answer; a failure after streaming began closes the connection.
import { STATUS_CODES } from 'node:http';
import { constants as http2Constants } from 'node:http2';
import { chunkBytes, encodeBody } from './coerce.js';
import { isCloudEvent, toBinary } from './cloudevents.js';
import { storeOwnHead } from './head.js';
import { withoutConnectionFields } from './http2.js';
import { getLogger, write } from './logs.js';
import { FunctionRequest, HttpError } from './request.js';
import { BINARY, TEXT } from './response.js';

const errorsLog = getLogger('funcwsgi.errors');
const timeoutLog = getLogger('funcwsgi.timeout');

export const INTERNAL_ERROR = Buffer.from('Internal Server Error');
export const TIMEOUT_BODY = Buffer.from('Timeout while processing the function');

/** The reason phrases funcwsgi's own answers use (Python's http.HTTPStatus), for identical status lines. */
export const REASONS = { 400: 'Bad Request', 403: 'Forbidden', 408: 'Request Timeout', 413: 'Request Entity Too Large', 500: 'Internal Server Error', 503: 'Service Unavailable' };

/**
 * Once an answer is written, node:http drains a request nobody read (IncomingMessage._dump: a
 * resume, a flow and three ticks, about a sixth of a hello world's instructions). A request
 * without a body has nothing on the wire to drain: unless the function listens for the end of
 * its stream, it is marked as being read, with the flag node:http's own _read() sets.
 * (test/connections.test.js checks that node:http still honours the flag, test/http.test.js the listeners.)
 */
function leaveUndrained(incoming) {
  const headers = incoming.headers;
  if (headers['content-length'] !== undefined || headers['transfer-encoding'] !== undefined) return;
  if (incoming.listenerCount('end') === 0 && incoming.listenerCount('close') === 0) incoming._consuming = true;
}

export class Call {
  /**
   * @param {object} runtime the server's shared parts (config, metrics, tracing, cors)
   * @param {import('node:http').IncomingMessage} incoming
   * @param {import('node:http').ServerResponse} outgoing
   */
  constructor(runtime, incoming, outgoing, requestId) {
    this.runtime = runtime;
    this.incoming = incoming;
    this.outgoing = outgoing;
    this.requestId = requestId;
    /** Flat [name, value, ...] every answer of this call carries besides X-Request-Id (CORS), or null. */
    this.extraHeaders = null;
    this.method = incoming.method;
    /** A stream of an HTTP/2 connection (lib/http2.js), not an HTTP/1.1 request. */
    this.http2 = incoming.httpVersionMajor === 2;
    this.started = performance.now();
    this.deadline = Infinity; // set and cleared by the runtime's Deadlines
    this.answeredAt = 0; // when the function's answer was taken (the clock read for the deadline), else 0
    this.before = null;
    this.after = null;
    this.answered = false;
    this.ended = false;
    this.streaming = false;
    this.status = 0;
    this.failure = null; // 'exception' | 'timeout': counted as failed whatever the status
    this.data = null; // the body as read, null when the request had none
    this.request = null;
    this.res = null;
    this.span = null;
    this.traceContext = null;
    this.cloudEvent = null;
    this.abort = null;
    this.clientLeft = false; // latched when the answer ends: the client had gone before it was complete
    this.onEnd = null; // (call) => void: metrics, span and access log, once
    this.bytesSent = 0;
    this.refusing = false; // answering 500 for a head node:http refused (refusedHead)
  }

  /** The function's request, made on first use (a main() that never asks pays nothing). */
  get req() {
    if (this.request === null) this.request = new FunctionRequest(this.incoming, this.data, this);
    return this.request;
  }

  get path() {
    const url = this.incoming.url;
    const at = url.indexOf('?');
    return at < 0 ? url : url.slice(0, at);
  }

  /** An AbortSignal aborted when the call times out or the client goes away (made on first use). */
  get signal() {
    if (this.abort === null) {
      this.abort = new AbortController();
      const cause = this.cancelledNow();
      if (cause !== null) this.abort.abort(new Error(cause === 'timeout' ? 'the call timed out' : 'the client closed the connection'));
      else this.outgoing.once('close', () => { if (!this.ended) this.abort.abort(new Error('the client closed the connection')); });
    }
    return this.abort.signal;
  }

  /**
   * What the function is told when it asks (sdk.cancelled(), req.signal): cancelCause(), and past
   * the deadline the call times out now, answered 408, even if the deadlines' sweep has not come round
   * (a function checking in a loop keeps the event loop busy). The `answered` flag decides which answer
   * goes out, the function's or the 408, once: one thread, so no race; a function told it timed out
   * never gets its own answer out instead.
   */
  cancelledNow() {
    if (this.deadline !== Infinity && performance.now() >= this.deadline) this.timedOut('the function did not return');
    return this.cancelCause();
  }

  /** Why nobody waits for the call any more: 'timeout', 'client' (it left before the answer was complete), or null. */
  cancelCause() {
    if (this.failure === 'timeout') return 'timeout';
    if (!this.clientLeft && !this.ended && (this.outgoing.destroyed || this.incoming.socket?.destroyed === true)) this.clientLeft = true;
    return this.clientLeft ? 'client' : null;
  }

  // -- the runtime's own short answers -------------------------------------------------
  /** Answer with a fixed status and text body; false when an answer was already made. */
  reply(status, body, reason = REASONS[status]) {
    return this.answer(status, ['Content-Type', TEXT, 'Content-Length', String(body.length)], body, reason, true);
  }

  /**
   * The whole answer. `ownHeaders`: every header in `headers` is the runtime's own (names and
   * values it made or checked), so that a plain head may skip writeHead()'s checks (head.js).
   * The call counts as answered only once node:http has taken the head: a head it refuses (a
   * header name or value it cannot send, a status it does not know) is the function's error,
   * answered with the runtime's 500 (lib/call.js refusedHead). A final 1xx is the function's
   * error too; 204 and 304 go without content and its fields whatever the function set.
   */
  answer(status, headers, body, reason, ownHeaders = false) {
    if (this.answered) return false;
    if (status >= 100 && status < 200) return this.interim(status);
    if (NO_CONTENT.has(status)) {
      headers = withoutContentFields(headers);
      body = undefined;
    }
    this.cancelCause(); // latched before the answer ends: a client gone by now is a cancelled call
    const outgoing = this.outgoing;
    const all = this.withOwnHeaders(headers);
    if (this.runtime.stopping) outgoing.shouldKeepAlive = false;
    try {
      if (this.http2) {
        // HTTP/2 has no reason phrase (node:http2 warns about one) and no connection fields.
        outgoing.writeHead(status, withoutConnectionFields(all));
      } else if (!(ownHeaders && body !== undefined && this.extraHeaders === null) || !storeOwnHead(outgoing, status, reason, all)) {
        if (reason === undefined) outgoing.writeHead(status, all);
        else outgoing.writeHead(status, reason, all);
        // node:http writes the head with a string body in the body's encoding: as Latin-1 with bytes (RFC 9110 5.5).
        if (!ownHeaders && typeof body === 'string') body = Buffer.from(body);
      }
    } catch (error) {
      return this.refusedHead(error);
    }
    this.answered = true;
    this.ended = true;
    this.status = status;
    this.stopTimer();
    if (body !== undefined) this.bytesSent = typeof body === 'string' ? Buffer.byteLength(body) : body.length;
    leaveUndrained(this.incoming);
    outgoing.end(body);
    if (this.http2) this.runtime.timeSending(this);
    this.finish();
    return true;
  }

  /**
   * node:http refused the head of the function's answer (it threw from writeHead(): a header name that is not
   * a token, a value with a control character or past Latin-1, a status outside 100-999): the runtime's 500
   * instead, the reason in one log line. What writeHead() had stored of the refused head is forgotten first.
   */
  refusedHead(error) {
    const outgoing = this.outgoing;
    if (this.refusing) {
      // The runtime's own 500 refused as well (never expected): the connection is closed, the call ends.
      write('funcwsgi.errors', 40, `Could not answer ${this.method} ${this.path}: ${error?.message}; closing the connection`);
      this.answered = true;
      this.ended = true;
      if (this.http2) this.outgoing.stream.close(http2Constants.NGHTTP2_INTERNAL_ERROR);
      else outgoing.destroy();
      this.finish();
      return true;
    }
    this.refusing = true;
    this.failure ??= 'exception';
    errorsLog.error(`Function answered ${this.method} ${this.path} with a head node:http cannot send (${error?.message ?? error}); answered 500 instead`);
    for (const name of outgoing.getHeaderNames()) outgoing.removeHeader(name);
    if (!this.http2) {
      outgoing._hasBody = this.method !== 'HEAD'; // writeHead() of a 1xx, 204 or 304 cleared it
      outgoing.chunkedEncoding = false;
    }
    return this.reply(500, INTERNAL_ERROR);
  }

  /** A final status below 200 from the function: 1xx is interim (RFC 9110 15.2), a final answer must follow; it is the function's error. */
  interim(status) {
    this.failure ??= 'exception';
    errorsLog.error(`Function answered ${this.method} ${this.path} with the interim status ${status} as its answer: an answer's status is 200 or more (RFC 9110 section 15.2); answered 500 instead`);
    return this.reply(500, INTERNAL_ERROR);
  }

  /** `headers` (a fresh array) with the ones every answer of the call carries. */
  withOwnHeaders(headers) {
    headers.push('X-Request-Id', this.requestId);
    if (this.extraHeaders !== null) for (const item of this.extraHeaders) headers.push(item);
    return headers;
  }

  /** When the call ended, for its duration: the moment its answer was taken, or now (a stream ends now). */
  endedAt() {
    return this.answeredAt === 0 ? performance.now() : this.answeredAt;
  }

  finish() {
    if (this.onEnd !== null) {
      const onEnd = this.onEnd;
      this.onEnd = null;
      onEnd(this);
    }
  }

  fail(error) {
    if (error instanceof HttpError) {
      const body = Buffer.from(error.message);
      if (!this.reply(error.status, body, error.reason)) errorsLog.warning(`${this.method} ${this.path} answered ${error.status} after its response started`);
      return;
    }
    this.failure ??= 'exception';
    if (this.streaming) {
      write('funcwsgi.errors', 40, `Function failed while streaming ${this.method} ${this.path}; closing the connection`, undefined, error);
      this.ended = true;
      // HTTP/2: the stream alone is reset, with INTERNAL_ERROR (a bare destroy() would say NO_ERROR).
      if (this.http2) this.outgoing.stream.close(http2Constants.NGHTTP2_INTERNAL_ERROR);
      else this.outgoing.destroy();
      this.finish();
      return;
    }
    if (this.answered) {
      write('funcwsgi.errors', 40, `Function failed on ${this.method} ${this.path} after it answered`, undefined, error);
      return;
    }
    write('funcwsgi.errors', 40, `Function failed on ${this.method} ${this.path}`, undefined, error);
    this.reply(500, INTERNAL_ERROR);
  }

  // -- the call timeout ------------------------------------------------------------------
  stopTimer() {
    if (this.deadline !== Infinity) this.runtime.deadlines.remove(this);
  }

  timedOut(why) {
    this.stopTimer();
    if (this.answered) return;
    this.failure = 'timeout';
    const seconds = this.runtime.config.serverCallTimeout;
    timeoutLog.warning(`Call timed out after ${formatSeconds(seconds)}s (${why}): ${this.method} ${this.path}`);
    this.reply(408, TIMEOUT_BODY);
    this.abort?.abort(new Error('the call timed out'));
  }

  /** Whether the deadline passed while the event loop was busy (a function that blocked it). */
  overdue() {
    if (this.deadline === Infinity || this.answered) return false;
    const now = performance.now();
    this.answeredAt = now; // the call's end for its metrics and access log: one clock read per call
    if (now <= this.deadline) return false;
    const blocked = (now - this.deadline) / 1000 + this.runtime.timeout;
    this.runtime.blocked?.(this, blocked);
    this.timedOut(`it blocked the event loop for ${blocked.toFixed(1)}s`);
    return true;
  }

  // -- what the function answered -------------------------------------------------------
  /** Send `value` (or `res`'s body when it is null/undefined), coerced as funcwsgi does. */
  answerWith(value, res) {
    if (this.answered) return;
    if (this.overdue()) return;
    try {
      if (typeof value === 'object' && value !== null) {
        if (value instanceof Response) return this.passResponse(value);
        if (isCloudEvent(value)) return this.replyEvent(value, res);
      }
      // Returning `res` itself (`return res.setCode(201)`: every setter returns res) sends res, as in Python.
      const body = value === undefined || value === null || (res !== undefined && value === res) ? res?.body : value;
      if (typeof body === 'object' && body !== null && body instanceof Response) return this.passResponse(body);
      if (res && NO_CONTENT.has(res.statusCode)) return void this.answer(res.statusCode, responseHeaders(res, undefined, undefined), undefined);
      let data, stream, contentType;
      if (typeof body === 'string') {
        data = body; // the usual answer, without encodeBody's result object
        contentType = TEXT;
      } else ({ data, stream, contentType } = encodeBody(body));
      const status = res ? res.statusCode : 200;
      const headers = responseHeaders(res, contentType, data);
      if (data !== undefined) {
        this.answer(status, headers, data, STATUS_CODES[status] === undefined ? 'Unknown' : undefined, !res || res._headers === null);
        return;
      }
      this.streamWith(status, headers, stream);
    } catch (error) {
      this.fail(error);
    }
  }

  /**
   * Starts a streamed answer; false when it did not start (the head was refused, or the status carries no
   * content: the call has been answered then). streamWith() is the usual way in.
   */
  startStream(status, headers) {
    if (this.answered) return false;
    if (status >= 100 && status < 200) this.interim(status);
    else if (NO_CONTENT.has(status)) this.answer(status, headers, undefined);
    if (this.answered) return false;
    if (this.runtime.stopping) this.outgoing.shouldKeepAlive = false;
    const all = this.withOwnHeaders(headers);
    try {
      this.outgoing.writeHead(status, this.http2 ? withoutConnectionFields(all) : all);
    } catch (error) {
      this.refusedHead(error);
      return false;
    }
    this.answered = true;
    this.streaming = true;
    this.status = status;
    this.stopTimer(); // only the call is timed; a stream goes at the client's pace
    this.answeredAt = 0; // a stream's call ends with its last chunk
    if (this.http2) this.runtime.timeSending(this);
    return true;
  }

  /** The answer's head, then `stream` as its body; a stream that does not start is closed unread. */
  streamWith(status, headers, stream) {
    if (this.startStream(status, headers)) this.pump(stream);
    else discard(stream);
  }

  async pump(stream) {
    const outgoing = this.outgoing;
    try {
      const source = typeof stream[Symbol.asyncIterator] === 'function' ? stream : iterate(stream);
      for await (const chunk of source) {
        if (outgoing.destroyed) break; // the client went away; leaving the loop closes the iterator
        const bytes = chunkBytes(chunk);
        this.bytesSent += bytes.length;
        if (!outgoing.write(bytes)) await drained(outgoing);
      }
      this.endStream();
    } catch (error) {
      this.fail(error);
    }
  }

  writeChunk(res, chunk, encoding) {
    if (this.ended) return false;
    if (!this.answered) {
      if (this.overdue()) return false; // its first write came after the deadline: the 408 went out instead
      if (!this.startStream(res.statusCode, responseHeaders(res, undefined, undefined))) return false;
    }
    if (chunk === undefined || chunk === null) return true;
    const bytes = typeof chunk === 'string' && encoding ? Buffer.from(chunk, encoding) : chunkBytes(chunk);
    this.bytesSent += bytes.length;
    return this.outgoing.write(bytes);
  }

  endStream(chunk, encoding) {
    if (this.ended) return;
    this.cancelCause();
    this.ended = true;
    if (chunk !== undefined && chunk !== null) this.outgoing.end(typeof chunk === 'string' && encoding ? Buffer.from(chunk, encoding) : chunkBytes(chunk));
    else this.outgoing.end();
    this.finish();
  }

  /** A WHATWG Response answers itself: its status, headers and body (its framing fields are the runtime's). */
  passResponse(response) {
    const headers = [];
    let length = '0';
    for (const [name, value] of response.headers) {
      if (name === 'set-cookie') continue;
      if (FRAMING_FIELDS.has(name)) {
        // HEAD: a Content-Length is the one a GET would have had (RFC 9110 section 8.6), kept when it is a number.
        if (name === 'content-length' && this.method === 'HEAD' && /^\d+$/.test(value)) length = value;
        else framingField(this, name, value);
      } else headers.push(name, value);
    }
    for (const cookie of response.headers.getSetCookie()) headers.push('set-cookie', cookie);
    if (response.body === null) {
      headers.push('Content-Length', length);
      this.answer(response.status, headers, undefined, response.statusText || undefined);
      return;
    }
    this.streamWith(response.status, headers, response.body);
  }

  /** A returned CloudEvent is the reply, in binary content mode; res's status and headers are kept. */
  replyEvent(event, res) {
    const { headers: eventHeaders, body } = toBinary(event);
    const merged = new Headers(res?._headers ?? undefined);
    for (const [name, value] of Object.entries(eventHeaders)) merged.set(name, value);
    merged.set('content-length', String(body.length));
    const flat = [];
    for (const [name, value] of merged) {
      if (FRAMING_FIELDS.has(name) && name !== 'content-length') framingField(this, name, value);
      else flat.push(name, value);
    }
    this.answer(res ? res.statusCode : 200, flat, body);
  }
}

/**
 * The fields of an answer's framing: the runtime's own (RFC 9112 sections 6 and 9.6), whatever a function sets.
 * Its body's length is the runtime's Content-Length (a stream goes chunked); Transfer-Encoding, Connection and
 * Keep-Alive are dropped, as funcwsgi's edge drops them (adapters/gunicorn/http1.py OWN_FIELDS), a
 * `Connection: close` closing the connection after the answer. Names lower-case.
 */
export const FRAMING_FIELDS = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive']);

/** A framing field the function set, left out of its answer: only `Connection: close` is kept, as the connection's close. */
export function framingField(call, lowerName, value) {
  if (lowerName === 'connection' && /(?:^|[\s,])close(?:$|[\s,])/i.test(String(value))) call.outgoing.shouldKeepAlive = false;
}

/** Flat headers of `res`, with the body's default content type unless it set one; the runtime counts the bytes. */
export function responseHeaders(res, contentType, data) {
  const own = res?._headers;
  const flat = [];
  let typed = false;
  if (own) {
    for (const [name, value] of own) {
      if (FRAMING_FIELDS.has(name)) {
        framingField(res.call, name, value);
        continue;
      }
      if (name === 'content-type') typed = true;
      flat.push(name, value);
    }
  }
  if (!typed && contentType !== undefined) flat.push('Content-Type', contentType);
  if (data !== undefined) flat.push('Content-Length', String(typeof data === 'string' ? Buffer.byteLength(data) : data.length));
  return flat;
}

/** 204 and 304 carry no content (RFC 9110 sections 15.3.5, 15.4.5): what was sent with them is dropped, with its Content-Type, as Express drops it. */
const NO_CONTENT = new Set([204, 304]);
/** What a 204 or 304 never carries: RFC 9110 section 8.6 forbids a Content-Length on a 204, and a 304's would have to be a 200's the runtime never made. */
const CONTENT_FIELDS = new Set(['content-type', 'content-length', 'transfer-encoding']);

function withoutContentFields(flat) {
  const kept = [];
  for (let i = 0; i < flat.length; i += 2) if (!CONTENT_FIELDS.has(String(flat[i]).toLowerCase())) kept.push(flat[i], flat[i + 1]);
  return kept;
}

/** A body that will not be sent (its answer did not start): closed, so that what feeds it stops. */
function discard(stream) {
  try {
    if (typeof stream?.destroy === 'function') stream.destroy();
    else if (typeof stream?.cancel === 'function') stream.cancel().catch(() => {});
    else if (typeof stream?.return === 'function') Promise.resolve(stream.return()).catch(() => {});
  } catch {
    // closing what the function made is best effort
  }
}

function* iterate(iterator) {
  for (const chunk of iterator) yield chunk;
}

function drained(outgoing) {
  return new Promise((resolve) => {
    const done = () => { outgoing.off('drain', done); outgoing.off('close', done); resolve(); };
    outgoing.on('drain', done);
    outgoing.on('close', done);
  });
}

/** Seconds as Python's %g writes them (2, 0.5, 180). */
export function formatSeconds(seconds) {
  return Number(seconds.toPrecision(6)).toString();
}

export { BINARY };
