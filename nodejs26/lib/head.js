// The head of an answer whose every header the runtime made itself, stored on
// node:http's response as its writeHead() would store it, without the work
// writeHead() does for headers it cannot trust: checking each name and value
// against a pattern, lowercasing each name to look for the ones it treats
// specially, and the string building between. For a hello world that work is
// about a tenth of the instructions of a call (docs/performance.md).
//
// Only an answer node:http would give the plain form qualifies: a known status
// with its standard reason and a body (not 1xx, 204 or 304), a Content-Length
// among the headers, a connection kept alive, nothing set on the response by
// node:http's own setHeader(), no 100-continue pending. Anything else goes
// through writeHead(). The head is node:http's byte for byte (Date and
// Connection included): test/head.test.js compares the two on the wire, and
// fails if node:http stops sending a head stored this way.
import { STATUS_CODES } from 'node:http';

const STATUS_LINES = [];
for (const [code, reason] of Object.entries(STATUS_CODES)) {
  const status = Number(code);
  if (status >= 200 && status !== 204 && status !== 304) STATUS_LINES[status] = `HTTP/1.1 ${status} ${reason}\r\n`;
}

const END = 'Connection: keep-alive\r\n\r\n';

// node:http's Date header, made at most once a second as node:http makes its own.
let dateLine = '';
const forgetDate = () => { dateLine = ''; };

function date() {
  if (dateLine === '') {
    const now = new Date();
    dateLine = `Date: ${now.toUTCString()}\r\n`;
    setTimeout(forgetDate, 1000 - now.getMilliseconds()).unref();
  }
  return dateLine;
}

/**
 * Store the head of `outgoing` from a flat [name, value, ...] list the runtime made (one
 * Content-Length among them, names and values it checked); false when writeHead() must do it.
 * `reason`: the status line's, undefined for the standard one.
 */
export function storeOwnHead(outgoing, status, reason, headers) {
  const statusLine = typeof status === 'number' ? STATUS_LINES[status] : undefined;
  if (statusLine === undefined || (reason !== undefined && reason !== STATUS_CODES[status])) return false;
  if (!outgoing.shouldKeepAlive || !outgoing.sendDate || outgoing.maxRequestsOnConnectionReached) return false;
  if (outgoing._header !== null || (outgoing._expect_continue && !outgoing._sent100) || outgoing.getHeaderNames().length !== 0) return false;
  let head = statusLine;
  for (let at = 0; at < headers.length; at += 2) head += `${headers[at]}: ${headers[at + 1]}\r\n`;
  outgoing.statusCode = status;
  outgoing.statusMessage = STATUS_CODES[status];
  outgoing._header = head + date() + END;
  outgoing._headerSent = false;
  return true;
}
