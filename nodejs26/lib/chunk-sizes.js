// A chunk whose size alone is past SERVER_MAX_BODY_SIZE: 413 at once (issue 42 item 7).
//
// node:http's parser (llhttp, in C++) takes a chunk's size line without telling it, and
// reads the socket itself: the bytes never reach JavaScript. So the runtime reads each
// HTTP/1.1 connection's bytes (a 'data' listener, which moves the socket to node:http's
// JavaScript reads for good) and hands them to node:http's own 'data' listener, cut where
// llhttp's state can be known, as funcwsgi's edge feeds llhttp
// (funcwsgi/adapters/gunicorn/bounds.py):
//
// - heads: cut after each CRLFCRLF (which may straddle reads). node:http hands a request
//   to the request listener within the piece its head ends, so once that piece is parsed,
//   whether a chunked body follows is known;
// - a chunked body: cut after each LF, and after a chunk's data. A whole line that brought
//   llhttp no body bytes (counted in CountedIncomingMessage.push) is framing; read as hex
//   digits ending at ';' or the line's end, it is the size line of the chunk llhttp now
//   waits for. That size, with the body before it, past the limit: 413, and nothing more is
//   read. A size within the limit: its data, as llhttp counts it, goes over in one piece.
//
// It bounds, it does not frame: llhttp decides where every message and chunk ends, and a
// piece of data llhttp did not take whole as body puts the reader back to cutting lines.
// The cost is measured in docs/nodejs26.md#a-chunk-size-past-the-body-limit.
import http from 'node:http';

const CR = 13;
const LF = 10;
const SEMICOLON = 59;

/** Body bytes llhttp has handed to any request, ever: a piece's share is the difference across its parse. */
let bodyBytes = 0;
/** The reader whose head piece node:http is parsing: a request handed over now is its connection's. */
let parsingHead = null;

/** Set on a request whose chunk size is past the limit; also the event emitted on it then. */
export const PAST_LIMIT = Symbol('a chunk size past the body limit');

/** The request class of node:http's server: counts the body bytes llhttp hands over. */
export class CountedIncomingMessage extends http.IncomingMessage {
  push(chunk, encoding) {
    if (chunk !== null) bodyBytes += chunk.length;
    return super.push(chunk, encoding);
  }
}

// Where a line of a chunked body stands, as far as it has arrived.
const LINE_START = 0; // nothing of it yet
const SIZE_DIGITS = 1; // hex digits only
const SIZE_READ = 2; // hex digits, then ';' or CR: a size, if llhttp takes the line as framing
const NOT_SIZE = 3; // anything else

/** Bytes of a CRLFCRLF the bytes so far end with, after `matched` of them and then byte `c` (4: a whole one). */
function step(matched, c) {
  if (c === CR) return matched === 2 ? 3 : 1;
  if (c === LF) return matched === 1 ? 2 : matched === 3 ? 4 : 0;
  return 0;
}

/** Where the first CRLFCRLF from `at` on ends in `data` (`matched` of its bytes came before `at`), or -1. */
function headEnd(data, at, matched) {
  const n = data.length;
  let i = at;
  // One begun before `at` ends within the next three bytes.
  while (matched !== 0 && i < n && i < at + 3) {
    matched = step(matched, data[i]);
    i += 1;
    if (matched === 4) return i;
  }
  // Any other ends at at + 3 or later. A byte that is neither CR nor LF is in none of the four
  // that end after it; an LF that ends none can only be the second byte of one.
  i = at + 3;
  while (i < n) {
    const c = data[i];
    if (c === LF) {
      if (data[i - 1] === CR && data[i - 2] === LF && data[i - 3] === CR) return i + 1;
      i += 2;
    } else {
      i += c === CR ? 1 : 4;
    }
  }
  return -1;
}

/** Bytes of a CRLFCRLF `data` ends with, `matched` of them having come before `from`. */
function trailing(data, from, matched) {
  const n = data.length;
  let i = from;
  if (n - from >= 3) {
    i = n - 3; // a part of one is at most three bytes
    matched = 0;
  }
  for (; i < n; i++) matched = step(matched, data[i]);
  return matched === 4 ? 0 : matched;
}

/** The value of a hex digit, or -1. */
function hexValue(c) {
  if (c >= 48 && c <= 57) return c - 48;
  const lower = c | 0x20;
  return lower >= 97 && lower <= 102 ? lower - 87 : -1;
}

class ChunkSizeReader {
  /**
   * @param {import('node:net').Socket} socket
   * @param {(data: Buffer) => void} parse node:http's own 'data' listener of the socket: its parser's execute
   * @param {number} limit SERVER_MAX_BODY_SIZE (> 0)
   */
  constructor(socket, parse, limit) {
    this.socket = socket;
    this.parse = parse;
    this.limit = limit;
    this.matched = 0; // bytes of a CRLFCRLF the bytes read so far end with, between heads
    this.stopped = false; // a chunk past the limit: nothing more is read
    // The request whose chunked body is being read (null: a head comes next), its response, its body so far.
    this.incoming = null;
    this.outgoing = null;
    this.body = 0;
    this.dataLeft = 0; // bytes of the current chunk's data llhttp waits for
    this.lastChunk = false; // its size-0 chunk was read: the lines left are trailers
    this.line = LINE_START;
    this.lineSize = 0; // the current line's hex digits so far, as a number (limit + 1 once past it)
    this.lineBody = false; // the current line brought body bytes: it is data
    this.onData = (data) => this.read(data);
  }

  read(data) {
    const socket = this.socket;
    const n = data.length;
    let at = 0;
    for (;;) {
      if (this.stopped) return;
      const end = this.incoming === null ? this.head(data, at) : this.body_(data, at);
      if (end >= n || this.stopped || socket.destroyed) return;
      at = end;
      if (socket.isPaused()) return void socket.unshift(data.subarray(at));
    }
  }

  /** Hands node:http bytes up to and with the next head end; returns where it stopped. */
  head(data, at) {
    const n = data.length;
    const found = headEnd(data, at, at === 0 ? this.matched : 0);
    const end = found < 0 ? n : found;
    parsingHead = this;
    try {
      this.parse(at === 0 && end === n ? data : data.subarray(at, end));
    } finally {
      parsingHead = null;
    }
    if (end === n) this.matched = found < 0 ? trailing(data, at, at === 0 ? this.matched : 0) : 0;
    return end;
  }

  /** A chunked request was handed over within the head just parsed: its body is read from here. */
  chunked(incoming, outgoing) {
    this.incoming = incoming;
    this.outgoing = outgoing;
    this.body = 0;
    this.dataLeft = 0;
    this.lastChunk = false;
    this.line = LINE_START;
    this.lineSize = 0;
    this.lineBody = false;
  }

  /** Hands node:http the next piece of the chunked body (a chunk's data, or up to and with an LF); returns where it stopped. */
  body_(data, at) {
    const n = data.length;
    const incoming = this.incoming;
    const before = bodyBytes;
    if (this.dataLeft > 0) {
      const end = Math.min(n, at + this.dataLeft);
      this.parse(at === 0 && end === n ? data : data.subarray(at, end));
      const taken = bodyBytes - before;
      this.body += taken;
      // llhttp took other than the data it was waiting for (it never does): lines are cut again.
      this.dataLeft = taken === end - at ? this.dataLeft - taken : 0;
      if (incoming.complete) this.incoming = null;
      return end;
    }
    let i = at;
    let line = this.line;
    let size = this.lineSize;
    const limit = this.limit;
    while (i < n) {
      const c = data[i];
      i += 1;
      if (c === LF) break;
      if (line === LINE_START || line === SIZE_DIGITS) {
        const digit = hexValue(c);
        if (digit >= 0) {
          line = SIZE_DIGITS;
          size = size * 16 + digit;
          if (size > limit) size = limit + 1;
        } else {
          line = line === SIZE_DIGITS && (c === SEMICOLON || c === CR) ? SIZE_READ : NOT_SIZE;
        }
      }
    }
    const lineEnded = data[i - 1] === LF;
    this.parse(at === 0 && i === n ? data : data.subarray(at, i));
    const taken = bodyBytes - before;
    this.body += taken;
    if (incoming.complete) {
      this.incoming = null;
      return i;
    }
    if (!lineEnded) {
      this.line = line;
      this.lineSize = size;
      this.lineBody ||= taken !== 0;
      return i;
    }
    const framing = !this.lineBody && taken === 0;
    this.line = LINE_START;
    this.lineSize = 0;
    this.lineBody = false;
    if (!framing || this.lastChunk || (line !== SIZE_DIGITS && line !== SIZE_READ)) return i;
    // A request answered before its body ended (a probe's, say) has the rest drained unseen: no body to count.
    if (this.outgoing.headersSent) return i;
    if (size === 0) {
      this.lastChunk = true;
    } else if (this.body + size > limit) {
      this.pastLimit(incoming);
    } else {
      this.dataLeft = size;
    }
    return i;
  }

  /** 413 once the request's turn comes (server.js receive), and the connection closes after its answer. */
  pastLimit(incoming) {
    this.stopped = true;
    this.incoming = null;
    this.outgoing.shouldKeepAlive = false;
    incoming[PAST_LIMIT] = true;
    incoming.emit(PAST_LIMIT);
  }
}

/**
 * Reads `socket`'s bytes before node:http's parser: call once node:http has taken the socket.
 * `limit` is SERVER_MAX_BODY_SIZE (> 0).
 */
export function readChunkSizes(socket, limit) {
  const [parse] = socket.listeners('data');
  const reader = new ChunkSizeReader(socket, parse, limit);
  socket.removeListener('data', parse);
  socket.on('data', reader.onData);
}

/** The request listener calls this with each request: a chunked one's size lines are read from here on. */
export function requestHeadRead(incoming, outgoing) {
  const reader = parsingHead;
  if (reader !== null && incoming.headers['transfer-encoding'] !== undefined) reader.chunked(incoming, outgoing);
}
