// Slow and hostile clients: the limits funcwsgi's gunicorn worker keeps
// (funcwsgi/adapters/gunicorn_worker.py), kept on node:http so that a client sees the
// same answers from both runtimes (docs/nodejs26.md#slow-and-hostile-clients).
//
// - SERVER_HEADER_TIMEOUT is node:http's headersTimeout, checked every SWEEP_MS
//   instead of every 30 s. A head that began and is not complete in time gets
//   funcwsgi's 408 and the connection is closed; a connection that sent nothing
//   is closed quietly. (node:http would answer its own bare 408 to the second
//   too, and nothing at all on a connection that already had an answer.)
// - SERVER_KEEPALIVE_TIMEOUT: a connection with no request in hand that has read
//   nothing since its last answer is closed quietly once it has waited that long
//   (found by the sweep, so up to 2 x SWEEP_MS late, never early). node:http's own
//   keepAliveTimeout is off: it re-arms a socket timer twice per call, about 5%
//   of a hello world's CPU, and sends a Keep-Alive header funcwsgi's Python
//   servers do not send. When the next head has begun on a kept-alive
//   connection, that head is left to the header timeout from its first byte
//   (node:http would close it quietly at the keep-alive timeout).
// - SERVER_BODY_TIMEOUT bounds a pause in the body, as funcwsgi does; then 408
//   and close. node:http's requestTimeout bounds the whole request instead, so
//   it is off: funcwsgi has no such bound.
// - SERVER_SEND_TIMEOUT: a response whose bytes have not moved for that long
//   (the client does not read) has its connection closed.
// - SERVER_MAX_CONNECTIONS: at the bound, an idle kept-alive connection, or
//   one that has had no request in hand for EVICT_AFTER_MS (a silent one, a
//   slow head, a stalled body), is closed for the new one, the longest-waiting
//   first; when there is none, the new connection waits unread, as it would in
//   the listen backlog, and is let in (handed to node:http) when one closes.
//   No accepted connection is closed unanswered for being one too many.
//   (node:http's maxConnections drops the new one, and node:http has no public
//   way to stop accepting: the connection is held before node:http sees it.)
// - HTTP/2 (lib/http2.js): a connection whose first bytes have not yet told
//   its protocol, and an HTTP/2 connection that has opened no stream, is closed
//   quietly after SERVER_HEADER_TIMEOUT; one with no stream open after
//   SERVER_KEEPALIVE_TIMEOUT (a GOAWAY first). Its open streams are its
//   requests in hand, for SERVER_MAX_CONNECTIONS. The send timeout of a
//   connection whose client reads nothing is the same as HTTP/1.1's; a stream
//   whose client keeps its window shut, or pauses in its body, is timed by
//   server.js.
//
// One sweep every SWEEP_MS looks at every open connection, as funcwsgi's
// worker does, so nothing is added per byte. A connection's state is one object
// made when it is accepted; a call only writes a few of its fields (no Map or
// Set updates unless a body is being read).

import { readChunkSizes } from './chunk-sizes.js';
import { sniffing } from './http2.js';

export const SWEEP_MS = 250;
/** A connection without a request in hand this long may be closed for a new one at SERVER_MAX_CONNECTIONS;
 * longer than TCP's first retransmission timeout (funcwsgi/serving/admission.py EVICT_AFTER). */
export const EVICT_AFTER_MS = 2000;
export const RETRY_AFTER_SECONDS = 1;
export const OVERLOADED_TEXT = 'the function is busy; retry later';
const TIMER_MAX_MS = 2 ** 31 - 1; // longer socket timeouts are taken for 1 ms by Node

/** A whole answer as funcwsgi's worker writes it on the wire before closing (funcwsgi/adapters/_requests.py Refusal). */
function refusal(status, reason, text, extra = '') {
  return Buffer.from(`HTTP/1.1 ${status} ${reason}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(text)}\r\n${extra}Connection: close\r\n\r\n${text}`, 'latin1');
}

export const REQUEST_TIMEOUT = refusal(408, 'Request Timeout', 'the request did not arrive in time');
export const OVERLOADED = refusal(503, 'Service Unavailable', OVERLOADED_TEXT, `Retry-After: ${RETRY_AFTER_SECONDS}\r\n`);

// node:http's own answers to the other malformed requests (its socketOnError), kept unchanged:
// a 'clientError' listener replaces them, so they are written here as node:http writes them.
const BARE = (status, reason) => Buffer.from(`HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\n\r\n`, 'latin1');
const NODE_ANSWERS = { HPE_HEADER_OVERFLOW: BARE(431, 'Request Header Fields Too Large'), HPE_CHUNK_EXTENSIONS_OVERFLOW: BARE(413, 'Payload Too Large') };
const BAD_REQUEST = BARE(400, 'Bad Request');

/** The request node:http handed over last on a socket (server.js handle): a parse error after it was whole is answered after it. */
export const NEWEST_REQUEST = Symbol('the newest request of the connection');
/** What a connection answers once its pending answers are sent (a refusal, or null: only the close). */
const AFTER_ANSWERS = Symbol('the answer after the pending ones');

/** Per connection, made once when it is accepted: what the limits need to know of it. */
const STATE = Symbol('the connection state');
/** Set on a response that was in hand (DISPATCHED), and counted in SERVER_MAX_INFLIGHT (ADMITTED). */
const MARK = Symbol('what the response counts for');
const DISPATCHED = 1;
const ADMITTED = 2;

class Connection {
  constructor(order, now) {
    this.idleMark = 0; // bytes read when the last answer was sent
    this.inHand = 0; // requests of the connection being answered
    this.waitingSince = order; // place in the eviction order, meaningful while no request is in hand
    this.waitingAt = now; // when it began waiting without a request in hand
    this.readingBody = false; // in Connections.receiving
    this.sent = null; // [bytes written, bytes pending, since] of a response that waits for its client
    this.idleSeenAt = -1; // when a sweep first found it waiting with nothing read since its last answer; 0 not yet, -1 no answer yet
    this.sniffing = false; // its first bytes have not told yet whether it speaks HTTP/2 (lib/http2.js)
    this.session = null; // its HTTP/2 session, once it opened with the preface
    this.streams = 0; // HTTP/2 streams it has opened
  }
}

const milliseconds = (seconds) => Math.min(TIMER_MAX_MS, Math.max(1, Math.round(seconds * 1000)));

/** node:http's options for the settings it has an equivalent of. */
export function serverOptions(config) {
  return {
    headersTimeout: milliseconds(config.serverHeaderTimeout),
    requestTimeout: 0,
    keepAliveTimeout: 0, // Connections.sweep() keeps SERVER_KEEPALIVE_TIMEOUT
    // The runtime answers a missing or repeated Host itself (server.js framingProblem): node:http's own 400
    // would still let the requests pipelined behind it reach the function.
    requireHostHeader: false,
    connectionsCheckingInterval: SWEEP_MS,
  };
}

/** How long a client may take to close its side of an HTTP/2 connection once the runtime has ended its own. */
export const LINGER_MS = 300;

/**
 * Ends an HTTP/2 connection: a GOAWAY, the streams in flight finish, then node:http2 ends its side of the socket
 * and waits for the client to end its own; a client that never does is cut off LINGER_MS later, so that it holds
 * neither a descriptor nor a stopping runtime. (Not at once: bytes the client sends meanwhile would be answered
 * with a reset, which can make its TCP stack discard the GOAWAY before the client has read it.)
 */
function endSession(session, socket) {
  socket.once('finish', () => setTimeout(() => socket.destroy(), LINGER_MS).unref());
  session.close();
}

export class Connections {
  /**
   * @param {import('node:http').Server} server made with serverOptions(config)
   * @param {object} config the frozen settings
   * @param {() => void} rejected counts a connection refused with 503
   * @param {() => void} released a call counted in flight (ADMITTED) has closed its response
   * @param {{handOver: (socket) => void}|null} http2 node:http2's side (lib/http2.js http2Server), or null: HTTP/1.1 only
   */
  constructor(server, config, rejected, released, http2 = null) {
    this.limit = config.serverMaxConnections;
    this.chunkLimit = config.serverMaxBodySize; // a chunk size past it: 413 at once (chunk-sizes.js)
    this.stopping = false;
    this.headerMs = config.serverHeaderTimeout * 1000;
    this.bodyMs = config.serverBodyTimeout * 1000;
    this.sendMs = config.serverSendTimeout * 1000;
    this.keepAliveMs = config.serverKeepaliveTimeout * 1000;
    this.rejected = rejected;
    this.released = released;
    this.open = new Set();
    // The order in which connections started waiting without a request in hand: a number per
    // connection, not a list kept sorted, so a call costs a few field writes (see evictOne()).
    this.order = 0;
    this.receiving = new Map(); // socket -> [bytes read, since]: a body being read
    const connections = this;
    // One listener per response, for both: its 'close' comes after its last byte went to the
    // client's socket, or when the client went away first.
    this.onClose = function onClose() { connections.responded(this); };
    // node:http's own 'connection' listener (it starts parsing) runs when a connection is let in.
    this.server = server;
    this.letIn = server.listeners('connection');
    server.removeAllListeners('connection');
    const toHttp1 = (socket) => {
      socket[STATE].sniffing = false;
      for (const listener of this.letIn) listener.call(this.server, socket);
      if (this.chunkLimit > 0) readChunkSizes(socket, this.chunkLimit);
    };
    this.handOver = http2 === null ? toHttp1 : this.sniffer(toHttp1, http2);
    this.held = []; // connections past the limit, unread, oldest first
    server.on('connection', (socket) => this.accept(socket));
    server.on('clientError', (error, socket) => this.clientError(error, socket));
    server.on('timeout', (socket) => this.idle(socket));
    this.sweeper = setInterval(() => this.sweep(), SWEEP_MS).unref();
  }

  accept(socket) {
    socket[STATE] = new Connection(++this.order, performance.now());
    socket.once('close', () => this.forget(socket));
    if (this.open.size >= this.limit && !this.evictOne()) {
      socket.on('error', () => {}); // a held caller that gives up: nothing to answer
      this.held.push(socket);
      return;
    }
    this.open.add(socket);
    this.handOver(socket);
  }

  /** Hands a connection to node:http or node:http2 by its first bytes (lib/http2.js). */
  sniffer(toHttp1, http2) {
    const sniff = sniffing(toHttp1, (socket) => {
      socket[STATE].sniffing = false;
      http2.handOver(socket);
    });
    return (socket) => {
      socket[STATE].sniffing = true;
      sniff(socket);
    };
  }

  /** An HTTP/2 connection's session: its open streams are its requests in hand. */
  session(session, socket) {
    const state = socket[STATE];
    state.session = session;
    session.on('error', () => {}); // node:http2 ends the session; nobody to answer
    session.on('stream', (stream) => {
      state.inHand += 1;
      state.streams += 1;
      stream.once('close', () => {
        state.inHand -= 1;
        if (state.inHand === 0) {
          if (this.stopping) return void endSession(session, socket);
          state.waitingSince = ++this.order;
          state.waitingAt = performance.now();
        }
      });
    });
  }

  /**
   * Stopping: an HTTP/2 connection with no stream open is closed (a GOAWAY, then the close); one with streams
   * in flight once they have ended. Not a GOAWAY before: Python's h2 (httpx's HTTP/2) fails the streams in
   * flight when one comes, though the GOAWAY counts them in.
   */
  closeSessions() {
    this.stopping = true;
    for (const socket of this.open) {
      const state = socket[STATE];
      if (state.session !== null) {
        if (state.inHand === 0) endSession(state.session, socket);
      } else if (state.sniffing) {
        socket.destroy();
      }
    }
  }

  /** Let held connections in while there is room, oldest first. */
  letHeldIn() {
    const held = this.held;
    while (held.length > 0 && this.open.size < this.limit) {
      const socket = held.shift();
      if (socket.destroyed) continue;
      const state = socket[STATE];
      state.waitingSince = ++this.order;
      state.waitingAt = performance.now();
      this.open.add(socket);
      this.handOver(socket);
    }
  }

  /** Close the evictable connection that has waited longest without a request in hand (a scan, only at the limit). */
  evictOne() {
    const now = performance.now();
    let longest = null;
    for (const socket of this.open) {
      const state = socket[STATE];
      if (state.inHand !== 0 || socket.destroyed || (longest !== null && state.waitingSince > longest[STATE].waitingSince)) continue;
      const keptAliveIdle = state.idleSeenAt >= 0 && socket.bytesRead === state.idleMark;
      if (keptAliveIdle || now - state.waitingAt >= EVICT_AFTER_MS) longest = socket;
    }
    if (longest === null) return false;
    this.forget(longest);
    longest.destroy();
    return true;
  }

  /** Open connections without a request in hand. */
  waitingCount() {
    let count = 0;
    for (const socket of this.open) if (socket[STATE].inHand === 0) count += 1;
    return count;
  }

  forget(socket) {
    if (this.open.delete(socket)) {
      this.stopReading(socket, socket[STATE]);
      if (this.held.length > 0) this.letHeldIn();
    }
  }

  stopReading(socket, state) {
    if (!state.readingBody) return;
    state.readingBody = false;
    this.receiving.delete(socket);
  }

  /** Every response, when it is done: see responded(). */
  watch(outgoing) {
    outgoing.on('close', this.onClose);
  }

  /** A body is being read for the request on `socket`: its pauses are timed. */
  receivingBody(socket) {
    socket[STATE].readingBody = true;
    this.receiving.set(socket, [socket.bytesRead, performance.now()]);
  }

  /** The request is complete and goes to the function or a probe: its connection is busy until answered. */
  dispatched(incoming, outgoing) {
    const socket = incoming.socket;
    const state = socket[STATE];
    this.stopReading(socket, state);
    state.inHand += 1;
    outgoing[MARK] = DISPATCHED;
  }

  /** The call of a dispatched response counts in flight until the response closes. */
  admitted(outgoing) {
    outgoing[MARK] = DISPATCHED | ADMITTED;
  }

  /** A response is done: its call no longer counts in flight; a connection with no other request in hand waits again, last in line. */
  responded(outgoing) {
    const mark = outgoing[MARK];
    const socket = outgoing.req.socket;
    const state = socket[STATE];
    state.idleMark = socket.bytesRead;
    state.idleSeenAt = 0;
    // A call's own socket timeout (req.raw.setTimeout) ends with its answer, as node:http's
    // keep-alive timer used to replace it: left, it would cut off the connection's next call.
    if (socket.timeout) socket.setTimeout(0);
    this.stopReading(socket, state);
    if (mark === undefined) return;
    if (mark & ADMITTED) this.released();
    state.inHand -= 1;
    if (state.inHand === 0) {
      state.waitingSince = ++this.order;
      state.waitingAt = performance.now();
      // A held caller waits for room: an idle connection gives its place up once its answer is out.
      if (this.held.length > 0 && outgoing.shouldKeepAlive) this.giveUp(socket);
    }
  }

  giveUp(socket) {
    this.forget(socket);
    socket.end();
  }

  /** A socket timeout: only a call's own (req.setTimeout / res.setTimeout) arms one. */
  idle(socket) {
    const response = socket._httpMessage;
    if (response) {
      // A call in progress set a timeout of its own (req.setTimeout): as node:http, it closes the
      // connection unless the call listens for the timeout (then its listener was called).
      const request = response.req;
      const heard = response.listenerCount('timeout') > 0 || (request && !request.complete && request.listenerCount('timeout') > 0);
      if (!heard) socket.destroy();
      return;
    }
    const state = socket[STATE];
    if (state !== undefined && socket.bytesRead > state.idleMark) {
      socket.setTimeout(0);
      return;
    }
    socket.destroy();
  }

  clientError(error, socket) {
    if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
      // A 408 on a connection that sent nothing could be read as the answer to its next request.
      const state = socket[STATE];
      if (state !== undefined && socket.bytesRead > state.idleMark && socket.writable) socket.write(REQUEST_TIMEOUT);
      socket.destroy();
      return;
    }
    const message = socket._httpMessage;
    // Bytes after the last whole request: the requests before them are answered first, in order (RFC 9112
    // 9.3.2), then the refusal. After a request that closes the connection there is none: what follows it is
    // not read at all (9.6), where node:http's parser takes it for an error and would cut the answer off.
    const newest = socket[NEWEST_REQUEST];
    if (newest !== undefined && newest.complete) {
      if (AFTER_ANSWERS in socket) return;
      socket[AFTER_ANSWERS] = error.code === 'HPE_CLOSED_CONNECTION' ? null : (NODE_ANSWERS[error.code] ?? BAD_REQUEST);
      socket.pause();
      if (message) message.once('close', () => this.afterAnswers(socket, message));
      else this.afterAnswers(socket, null);
      return;
    }
    if (socket.writable && (!message || !message._headerSent)) socket.write(NODE_ANSWERS[error.code] ?? BAD_REQUEST);
    socket.destroy(error);
  }

  /** The answer in progress is done: the next pipelined one, or the refusal kept for after the last, and the close. */
  afterAnswers(socket, answered) {
    const message = socket._httpMessage;
    if (message && message !== answered && !socket.destroyed) return void message.once('close', () => this.afterAnswers(socket, message));
    const answer = socket[AFTER_ANSWERS];
    if (answer !== null && socket.writable) socket.end(answer);
    else socket.end();
    setTimeout(() => socket.destroy(), LINGER_MS).unref();
  }

  sweep() {
    const now = performance.now();
    while (this.held.length > 0 && this.held[0].destroyed) this.held.shift();
    while (this.held.length > 0 && this.evictOne()) this.letHeldIn(); // silent connections past EVICT_AFTER_MS make room
    for (const [socket, seen] of this.receiving) {
      if (socket.bytesRead !== seen[0]) {
        seen[0] = socket.bytesRead;
        seen[1] = now;
      } else if (now - seen[1] >= this.bodyMs) {
        this.forget(socket);
        if (socket.writable) socket.write(REQUEST_TIMEOUT);
        socket.destroy();
      }
    }
    for (const socket of this.open) {
      this.checkWaiting(socket, now);
      this.checkSending(socket, now);
    }
  }

  /** Closes, quietly, a connection that has waited SERVER_KEEPALIVE_TIMEOUT with nothing read since its last answer. */
  checkWaiting(socket, now) {
    const state = socket[STATE];
    if (state.sniffing || state.session !== null) return this.checkHttp2(socket, state, now);
    if (state.idleSeenAt < 0) return; // a new connection that sent nothing is the header timeout's
    if (state.inHand !== 0 || socket.bytesRead !== state.idleMark) {
      state.idleSeenAt = 0; // busy, or a head has begun (the header timeout's)
    } else if (state.idleSeenAt === 0) {
      state.idleSeenAt = now;
    } else if (now - state.idleSeenAt >= this.keepAliveMs) {
      this.forget(socket);
      socket.destroy();
    }
  }

  /**
   * Closes, quietly, a connection that has not told its protocol within SERVER_HEADER_TIMEOUT, and an HTTP/2
   * connection with no stream open for SERVER_HEADER_TIMEOUT (none opened yet) or SERVER_KEEPALIVE_TIMEOUT.
   */
  checkHttp2(socket, state, now) {
    if (state.inHand !== 0 || now - state.waitingAt < (state.streams === 0 ? this.headerMs : this.keepAliveMs)) return;
    this.forget(socket);
    if (state.session !== null && !state.session.destroyed) endSession(state.session, socket);
    else socket.destroy();
  }

  /** Closes a connection whose pending response bytes have not moved for SERVER_SEND_TIMEOUT. */
  checkSending(socket, now) {
    const state = socket[STATE];
    const queued = socket._handle?.writeQueueSize ?? 0; // handed to libuv, not yet taken by the kernel
    const pending = socket.writableLength + queued;
    if (pending === 0) {
      state.sent = null;
      return;
    }
    const written = socket.bytesWritten;
    const seen = state.sent;
    if (seen === null || seen[0] !== written || seen[1] !== pending) {
      state.sent = [written, pending, now];
    } else if (now - seen[2] >= this.sendMs) {
      this.forget(socket);
      socket.destroy();
    }
  }

  stop() {
    clearInterval(this.sweeper);
  }
}
