// lib/head.js: a head stored by the runtime is node:http's writeHead() head, byte for byte on the
// wire, and the cases it does not qualify for are left to writeHead(). If node:http stops sending
// a head stored this way (a Node upgrade), the wire comparison fails.
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { after, before, test } from 'node:test';
import { storeOwnHead } from '../lib/head.js';

const TEXT = 'text/plain; charset=utf-8';
let server;
let port;
const stored = [];

before(async () => {
  server = http.createServer({ keepAliveTimeout: 0 }, (req, res) => {
    const url = new URL(req.url, 'http://x');
    const status = Number(url.searchParams.get('status') ?? '200');
    const body = url.searchParams.get('body') ?? 'hello';
    const headers = ['Content-Type', TEXT, 'Content-Length', String(Buffer.byteLength(body)), 'X-Request-Id', 'id-1'];
    if (url.pathname === '/own') stored.push(storeOwnHead(res, status, undefined, headers) || res.writeHead(status, headers) === null);
    else res.writeHead(status, headers);
    res.end(body);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = server.address().port;
});

after(() => server.close());

/** One exchange on a new connection: what came back until the answer was whole (its Content-Length) or the connection closed. */
function exchange(text, head = false) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(text));
    let data = '';
    const whole = () => {
      const at = data.indexOf('\r\n\r\n');
      if (at < 0) return false;
      const length = head ? 0 : Number(/content-length: (\d+)/i.exec(data.slice(0, at))?.[1] ?? 0);
      return data.length >= at + 4 + length;
    };
    socket.on('data', (chunk) => {
      data += chunk;
      if (whole()) { socket.destroy(); resolve(data); }
    });
    socket.on('end', () => resolve(data));
    socket.on('error', reject);
  });
}

const masked = (raw) => raw.replace(/\r\nDate: [^\r]+\r\n/, '\r\nDate: (masked)\r\n');

async function same(request, { head = false } = {}) {
  const own = await exchange(request('/own'), head);
  const node = await exchange(request('/node'), head);
  assert.ok(own.startsWith('HTTP/1.'), own);
  assert.equal(masked(own), masked(node));
  return own;
}

const get = (query, extra = '', method = 'GET', version = '1.1') => (path) => `${method} ${path}${query} HTTP/${version}\r\nHost: x\r\n${extra}\r\n`;

test('the plain answers: the same head as writeHead(), stored without it', async () => {
  stored.length = 0;
  const ok = await same(get('?status=200'));
  assert.match(ok, /^HTTP\/1.1 200 OK\r\nContent-Type: text\/plain; charset=utf-8\r\nContent-Length: 5\r\nX-Request-Id: id-1\r\nDate: .+ GMT\r\nConnection: keep-alive\r\n\r\nhello$/);
  await same(get('?status=404&body=no'));
  await same(get('?status=500&body=Internal%20Server%20Error'));
  await same(get('?status=503&body='));
  await same(get('?status=201', '', 'HEAD'), { head: true });
  await same(get('?status=200', 'Connection: keep-alive\r\n', 'GET', '1.0'));
  assert.deepEqual(stored, [true, true, true, true, true, true]);
});

test('what does not qualify is left to writeHead(), and comes out the same', async () => {
  stored.length = 0;
  await same(get('?status=200', 'Connection: close\r\n')); // not kept alive
  await same(get('?status=200', '', 'GET', '1.0')); // HTTP/1.0 without keep-alive
  await same(get('?status=299')); // no standard reason
  await same(get('?status=204&body=')); // no body by definition
  assert.deepEqual(stored, [false, false, false, false]);
});

test('a response with headers of its own (node:http setHeader) or a head already stored is left alone', () => {
  const req = new http.IncomingMessage(new net.Socket());
  req.httpVersionMajor = 1;
  req.httpVersionMinor = 1;
  const res = new http.ServerResponse(req);
  res.shouldKeepAlive = true;
  res.setHeader('X-Own', 'yes');
  assert.equal(storeOwnHead(res, 200, undefined, ['Content-Length', '0']), false);
  res.removeHeader('X-Own');
  assert.equal(storeOwnHead(res, 200, undefined, ['Content-Length', '0']), true);
  assert.equal(storeOwnHead(res, 200, undefined, ['Content-Length', '0']), false);
  assert.equal(storeOwnHead(new http.ServerResponse(req), '200', undefined, ['Content-Length', '0']), false, 'a status that is not a number');
  assert.equal(storeOwnHead(new http.ServerResponse(req), 413, 'Request Entity Too Large', ['Content-Length', '0']), false, "a reason that is not node:http's");
  assert.equal(storeOwnHead(new http.ServerResponse(req), 503, 'Service Unavailable', ['Content-Length', '0']), true, "node:http's own reason, given");
});
