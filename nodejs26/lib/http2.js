// HTTP/2 without TLS (h2c) on SERVER_PORT, beside HTTP/1.1 (docs/nodejs26.md#http2).
//
// node:http2's cleartext server speaks HTTP/2 only (its allowHTTP1 needs TLS), so
// the first bytes of each connection choose: a connection that opens with the
// HTTP/2 preface (prior knowledge, as Knative's queue-proxy and a mesh sidecar
// speak h2c) goes to node:http2's server, any other to node:http's. The bytes read
// to choose are put back (socket.unshift) before the server takes the socket.
// `Upgrade: h2c` is not offered: node:http2 cannot take over a connection whose
// first request came as HTTP/1.1, so such a request is answered over HTTP/1.1.
//
// Every stream is one call through the same steps as an HTTP/1.1 request
// (server.js): request id, admission, body limit, call timeout, metrics. What
// bounds a connection is node:http2's, configured here: see streamLimits().
import http2 from 'node:http2';
import { maxHeaderSize } from 'node:http';

/** What node:http2 does not hold, said at start-up with SERVER_HTTP2=true (tests/reliability/test_http2.py GAPS). */
export const HTTP2_GAPS = 'SERVER_HTTP2=true: node:http2 serves a request whose field values hold CR, LF, NUL or edge whitespace without those fields,'
  + ' where RFC 9113 refuses it, and answers no stream a client opens past SERVER_HTTP2_MAX_STREAMS before acknowledging it'
  + ' (docs/nodejs26.md#http2, docs/servers.md#http2)';

/** What an HTTP/2 connection opens with when the client knows the server speaks it (RFC 9113 section 3.4). */
export const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');
/** The header list a stream may have, HPACK-decoded: node:http's limit for an HTTP/1.1 head, one limit for both. */
export const HEADER_LIST_LIMIT = maxHeaderSize;
/** Header fields a request may have: node:http's own bound for an HTTP/1.1 head (maxHeadersCount). */
export const HEADER_FIELDS_LIMIT = 2000;
/**
 * Streams a client may reset in a burst, then per second, before its connection is closed
 * (rapid reset, CVE-2023-44487). node:http2's defaults are 1000 and 33: a thousand calls started
 * and abandoned at once.
 */
export const RESET_BURST = 100;
export const RESET_RATE = 10;
/** Malformed frames, and streams refused past SETTINGS_MAX_CONCURRENT_STREAMS, a connection may send before it is closed. */
export const INVALID_FRAMES = 100;
export const REJECTED_STREAMS = 100;

/** node:http2's options: the limits against abuse, justified in docs/nodejs26.md#http2. */
export function streamLimits(config) {
  return {
    settings: {
      maxConcurrentStreams: config.serverHttp2MaxStreams,
      maxHeaderListSize: HEADER_LIST_LIMIT,
      enablePush: false,
    },
    maxHeaderListPairs: HEADER_FIELDS_LIMIT,
    maxSessionInvalidFrames: INVALID_FRAMES,
    maxSessionRejectedStreams: REJECTED_STREAMS,
    streamResetBurst: RESET_BURST,
    streamResetRate: RESET_RATE,
  };
}

/**
 * A 'connection' listener that reads the first bytes of each connection and hands it on:
 * `toHttp2(socket)` when they are the preface, `toHttp1(socket)` as soon as they cannot be.
 * Until then the connection is one that has sent no request: SERVER_HEADER_TIMEOUT closes it (connections.js).
 */
export function sniffing(toHttp1, toHttp2) {
  return (socket) => {
    let seen = null;
    const failed = () => socket.destroy();
    const onData = (chunk) => {
      seen = seen === null ? chunk : Buffer.concat([seen, chunk]);
      const length = Math.min(seen.length, PREFACE.length);
      const preface = seen.compare(PREFACE, 0, length, 0, length) === 0;
      if (preface && length < PREFACE.length) return; // a part of the preface: wait for the rest
      socket.off('data', onData);
      socket.off('error', failed);
      socket.off('end', failed);
      socket.pause();
      socket.unshift(seen);
      if (preface) {
        // node:http2 reads what was put back when it takes the socket, then reads the socket itself.
        toHttp2(socket);
      } else {
        // node:http reads the socket as a stream: what was put back comes first, on resume.
        toHttp1(socket);
        socket.resume();
      }
    };
    socket.on('error', failed); // a client gone before it said anything: nothing to answer
    socket.on('end', failed); // node:http's sockets stay half-open when their client closes: nobody is left to answer
    socket.on('data', onData);
  };
}

/** The request headers of a stream as an HTTP/1.1 request has them: no pseudo-header fields, `host` from `:authority`. */
export function plainHeaders(headers) {
  const plain = {};
  for (const name of Object.keys(headers)) if (name.charCodeAt(0) !== 58) plain[name] = headers[name]; // ':'
  if (plain.host === undefined && headers[':authority'] !== undefined) plain.host = headers[':authority'];
  return plain;
}

/** Response fields that are HTTP/1.1's and have no place in HTTP/2 (RFC 9113 section 8.2.2): node:http2 throws on them. */
const CONNECTION_FIELDS = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'http2-settings']);

/** A flat [name, value, ...] response header list without HTTP/1.1's connection fields (a function may set them). */
export function withoutConnectionFields(headers) {
  let kept = null;
  for (let at = 0; at < headers.length; at += 2) {
    const connectionField = CONNECTION_FIELDS.has(String(headers[at]).toLowerCase());
    if (connectionField && kept === null) kept = headers.slice(0, at);
    else if (!connectionField && kept !== null) kept.push(headers[at], headers[at + 1]);
  }
  return kept ?? headers;
}

/** node:http2's server for the streams; `onSession(session, socket)` learns each connection's session. */
export function http2Server(config, onRequest, onSession) {
  const server = http2.createServer(streamLimits(config), onRequest);
  let handing = null;
  server.on('session', (session) => onSession(session, handing));
  return {
    server,
    handOver(socket) {
      // node:http accepts its sockets half-open-capable (allowHalfOpen), for its own end handling;
      // node:http2 has none: a client's close would leave the socket open (CLOSE-WAIT) until a timeout.
      socket.allowHalfOpen = false;
      handing = socket;
      try {
        server.emit('connection', socket);
      } finally {
        handing = null;
      }
    },
  };
}

export const CANCEL = http2.constants.NGHTTP2_CANCEL;
export const NO_ERROR = http2.constants.NGHTTP2_NO_ERROR;
