// A chunk whose size alone is past SERVER_MAX_BODY_SIZE is answered 413 at once (lib/chunk-sizes.js), however
// the bytes are cut into reads, on every request of a connection; and reading the bytes before node:http loses
// none: pipelined requests, bodies in pieces, Expect: 100-continue, HTTP/1.0, Upgrade, h2c beside HTTP/1.1.
// The runtime runs in this process on an ephemeral port; the client writes raw bytes, each piece in its own
// TCP segment, and waits a little after each, so that the server reads it alone.
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { fromEnv } from '../lib/config.js';
import { loadFunction } from '../lib/loader.js';
import { configureLogging } from '../lib/logs.js';
import { Runtime } from '../lib/server.js';
import { freePort, functions } from './helpers.js';

const LIMIT = 100_000;
/** Longer than any answer here takes: a 413 that waits for bytes never sent shows as no answer. */
const ANSWER_MS = 3000;

async function serve(settings = {}) {
  const config = fromEnv({
    HANDLER_FOLDER: functions('paths'), SERVER_HOST: '127.0.0.1', SERVER_PORT: String(await freePort()),
    SERVER_MAX_BODY_SIZE: String(LIMIT), SERVER_BODY_TIMEOUT: '30', ...settings,
  });
  configureLogging(config, () => {});
  const runtime = new Runtime(config, await loadFunction(config));
  const server = await runtime.listen();
  return { runtime, server, port: server.address().port };
}

const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Connects, writes `pieces` one by one (each flushed, then `gapMs`), and reads until the server closes the
 * connection or `until(received)` holds: { text, closed, ms } (ms: from the last write to the end). With
 * `holdReadsMs`, the pieces are written at once and nothing is read for that long.
 */
function exchange(port, pieces, { gapMs = 3, until = () => false, waitMs = ANSWER_MS, holdReadsMs = 0 } = {}) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.setNoDelay(true);
    const chunks = [];
    let closed = false;
    let lastWrite = 0;
    let timer = null;
    const finish = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ text: Buffer.concat(chunks).toString('latin1'), closed, ms: performance.now() - lastWrite });
    };
    socket.on('data', (chunk) => {
      chunks.push(chunk);
      if (until(Buffer.concat(chunks).toString('latin1'))) finish();
    });
    socket.on('end', () => { closed = true; finish(); });
    socket.on('close', () => { closed = true; finish(); });
    socket.on('error', () => {}); // a reset after the server's close: what was read is the answer
    socket.once('connect', async () => {
      if (holdReadsMs > 0) {
        socket.pause();
        for (const piece of pieces) socket.write(piece);
        lastWrite = performance.now();
        await pause(holdReadsMs);
        socket.resume();
        timer = setTimeout(finish, waitMs);
        return;
      }
      try {
        for (const piece of pieces) {
          if (socket.destroyed) break;
          lastWrite = performance.now();
          await new Promise((written) => socket.write(piece, written));
          await pause(gapMs);
        }
        timer = setTimeout(finish, waitMs);
      } catch (error) {
        reject(error);
      }
    });
  });
}

/** The status lines of a raw exchange, in order. */
const statuses = (text) => [...text.matchAll(/HTTP\/1\.[01] (\d{3}) /g)].map((match) => Number(match[1]));
/** The bodies of a raw exchange's answers (each has a Content-Length), in order. */
function bodies(text) {
  const found = [];
  for (const match of text.matchAll(/Content-Length: (\d+)\r\n(?:[^\r]*\r\n)*?\r\n/g)) {
    const body = text.slice(match.index + match[0].length, match.index + match[0].length + Number(match[1]));
    if (body.length === Number(match[1])) found.push(body);
  }
  return found;
}

const CHUNKED = (path = '/echo', version = '1.1') => `POST ${path} HTTP/${version}\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n`;
const PAST = `${CHUNKED('/size')}ffffffffffffffff\r\n`;
const GET = 'GET /hello HTTP/1.1\r\nHost: x\r\n\r\n';
const VALID = `${CHUNKED()}3\r\nabc\r\n5;ext=1\r\nde\nfg\r\n0\r\nX-Sum: 8\r\n\r\n`;
/** Every way to cut `text` in two. */
const cutsInTwo = (text) => Array.from({ length: text.length - 1 }, (_, at) => [text.slice(0, at + 1), text.slice(at + 1)]);
/** `text` a byte at a time. */
const bytes = (text) => [...text];

function assertRefusedAtOnce(result, before = []) {
  assert.deepEqual(statuses(result.text), [...before, 413], result.text);
  assert.ok(result.closed, `not closed after the 413: ${JSON.stringify(result.text)}`);
  assert.ok(result.ms < ANSWER_MS, `the 413 came after ${result.ms} ms`);
}

describe('a chunk size past SERVER_MAX_BODY_SIZE: 413 at once and the connection closed', () => {
  let served;
  before(async () => { served = await serve(); });
  after(() => served.server.close());

  test('in one write; the request pipelined behind it is not served', async () => {
    assertRefusedAtOnce(await exchange(served.port, [PAST + GET]));
  });

  test('a byte a time', async () => {
    assertRefusedAtOnce(await exchange(served.port, bytes(PAST)));
  });

  test('cut in two anywhere', async () => {
    for (const pieces of cutsInTwo(PAST)) assertRefusedAtOnce(await exchange(served.port, pieces, { gapMs: 2 }));
  });

  test('cut in three around the end of the head (a CRLFCRLF across three reads)', async () => {
    const headEnd = CHUNKED('/size').length;
    for (let first = headEnd - 4; first <= headEnd; first++) {
      for (let second = first + 1; second <= headEnd + 3; second++) {
        const pieces = [PAST.slice(0, first), PAST.slice(first, second), PAST.slice(second)];
        assertRefusedAtOnce(await exchange(served.port, pieces, { gapMs: 2 }));
      }
    }
  });

  test('leading zeros do not hide the size', async () => {
    assertRefusedAtOnce(await exchange(served.port, [`${CHUNKED('/size')}${'0'.repeat(40)}ffffffffffffffff;a=b\r\n`]));
  });

  test('a later chunk whose size, with the body before it, is past the limit', async () => {
    const first = 'x'.repeat(60_000);
    const text = `${CHUNKED('/size')}${(60_000).toString(16)}\r\n${first}\r\n${(LIMIT - 60_000 + 1).toString(16)}\r\n`;
    assertRefusedAtOnce(await exchange(served.port, [text]));
    assertRefusedAtOnce(await exchange(served.port, [text.slice(0, 70), text.slice(70, 30_000), text.slice(30_000)]));
    // Exactly at the limit is no refusal.
    const atLimit = `${CHUNKED('/size')}${(60_000).toString(16)}\r\n${first}\r\n${(LIMIT - 60_000).toString(16)}\r\n${'y'.repeat(LIMIT - 60_000)}\r\n0\r\n\r\n`;
    const answered = await exchange(served.port, [atLimit], { until: (got) => statuses(got).length === 1 && bodies(got).length === 1 });
    assert.deepEqual(bodies(answered.text), [String(LIMIT)]);
  });

  test('on a kept-alive connection, after other requests of every kind', async () => {
    const result = await exchange(served.port, [GET, VALID, 'POST /size HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc', PAST], { gapMs: 30 });
    assertRefusedAtOnce(result, [200, 200, 200]);
    assert.deepEqual(bodies(result.text).slice(0, 3), ['hello', 'abcde\nfg', '3']);
  });

  test('pipelined behind a chunked request, in one write: the first answered, then the 413', async () => {
    const result = await exchange(served.port, [VALID + PAST + GET]);
    assertRefusedAtOnce(result, [200]);
    assert.equal(bodies(result.text)[0], 'abcde\nfg');
  });

  test('behind a call still running: its answer first, then the 413', async () => {
    const result = await exchange(served.port, ['GET /sleep?seconds=0.3 HTTP/1.1\r\nHost: x\r\n\r\n' + PAST]);
    assertRefusedAtOnce(result, [200]);
  });

  test('with Expect: 100-continue: 100 Continue, then the 413 for the size line', async () => {
    const head = 'POST /size HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nTransfer-Encoding: chunked\r\n\r\n';
    const result = await exchange(served.port, [head, 'ffffffffffffffff\r\n'], { gapMs: 50 });
    assertRefusedAtOnce(result, [100]);
  });

  test('with an Expect other than 100-continue, which is ignored as funcwsgi ignores it', async () => {
    const head = 'POST /size HTTP/1.1\r\nHost: x\r\nExpect: something-else\r\nTransfer-Encoding: chunked\r\n\r\n';
    assertRefusedAtOnce(await exchange(served.port, [`${head}ffffffffffffffff\r\n`]));
    const valid = await exchange(served.port, [`${head}3\r\nabc\r\n0\r\n\r\n${GET}`], { until: (got) => bodies(got).length === 2 });
    assert.deepEqual([statuses(valid.text), bodies(valid.text)], [[200, 200], ['3', 'hello']]);
  });

  test('after an HTTP/1.0 keep-alive request; Upgrade: h2c changes nothing', async () => {
    const old = 'GET /hello HTTP/1.0\r\nConnection: keep-alive\r\n\r\n';
    assertRefusedAtOnce(await exchange(served.port, [old, PAST], { gapMs: 30 }), [200]);
    const upgrade = `POST /size HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAoAAAAAIAAAAA\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\n`;
    assertRefusedAtOnce(await exchange(served.port, [upgrade]));
  });
});

describe('reading before node:http loses nothing', () => {
  let served;
  before(async () => { served = await serve(); });
  after(() => served.server.close());

  test('a chunked body cut in two anywhere, a request pipelined behind it', async () => {
    for (const pieces of cutsInTwo(VALID + GET)) {
      const result = await exchange(served.port, pieces, { gapMs: 2, until: (got) => statuses(got).length === 2 && bodies(got).length === 2 });
      assert.deepEqual(statuses(result.text), [200, 200], JSON.stringify(pieces));
      assert.deepEqual(bodies(result.text), ['abcde\nfg', 'hello'], JSON.stringify(pieces));
    }
  });

  test('a chunked body a byte at a time, the size lines too', async () => {
    const result = await exchange(served.port, bytes(VALID), { until: (got) => bodies(got).length === 1 });
    assert.deepEqual(bodies(result.text), ['abcde\nfg']);
  });

  test('chunks whose data holds CRLFs, hex digits and what looks like a size line', async () => {
    const data = ['ffffffffffffffff\r\n', '\r\n\r\n', '0\r\n\r\n', 'GET / HTTP/1.1\r\n\r\n'];
    const body = data.map((part) => `${part.length.toString(16)}\r\n${part}\r\n`).join('') + '0\r\n\r\n';
    for (const gapMs of [0, 2]) {
      const pieces = gapMs === 0 ? [CHUNKED() + body + GET] : bytes(CHUNKED() + body + GET);
      const result = await exchange(served.port, pieces, { gapMs, until: (got) => bodies(got).length === 2 });
      assert.deepEqual(bodies(result.text), [data.join(''), 'hello']);
    }
  });

  test('20 pipelined chunked requests in pieces of 1-120 bytes: every one answered, in order', async () => {
    let seed = 7;
    const random = () => { seed = (seed * 1103515245 + 12345) % 2 ** 31; return seed / 2 ** 31; };
    for (let round = 0; round < 5; round++) {
      const requests = Array.from({ length: 20 }, (_, n) => `${CHUNKED()}${(n + 1).toString(16)}\r\n${String.fromCharCode(97 + n).repeat(n + 1)}\r\n0\r\n\r\n`);
      const text = requests.join('');
      const pieces = [];
      for (let at = 0; at < text.length;) {
        const step = 1 + Math.floor(random() * 120);
        pieces.push(text.slice(at, at + step));
        at += step;
      }
      const result = await exchange(served.port, pieces, { gapMs: 1, until: (got) => bodies(got).length === 20 });
      assert.deepEqual(bodies(result.text), requests.map((_, n) => String.fromCharCode(97 + n).repeat(n + 1)), `round ${round}`);
    }
  });

  test('node:http pauses the socket (a body nobody reads yet, a client that does not read): nothing is lost', async () => {
    const body = 'z'.repeat(90_000);
    const request = `${CHUNKED()}${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`;
    // The body of a request pipelined behind a running call fills its stream, which stops the socket's reads.
    const behindCall = await exchange(served.port, [`GET /sleep?seconds=0.2 HTTP/1.1\r\nHost: x\r\n\r\n${request}${GET}`], { until: (got) => bodies(got).length === 3 });
    assert.deepEqual(bodies(behindCall.text), ['slept', body, 'hello']);
    const result = await exchange(served.port, [request.repeat(20)], { holdReadsMs: 300, until: (got) => bodies(got).length === 20, waitMs: 10_000 });
    assert.equal(bodies(result.text).length, 20);
    assert.ok(bodies(result.text).every((got) => got === body));
  });

  test('a client that half-closes after its request is answered; one that resets mid-body costs nothing', async () => {
    const halfClosed = await new Promise((resolve) => {
      const socket = net.connect(served.port, '127.0.0.1', () => socket.end(VALID));
      let text = '';
      socket.on('data', (chunk) => { text += chunk; });
      socket.on('close', () => resolve(text));
    });
    assert.deepEqual(bodies(halfClosed), ['abcde\nfg']);
    await new Promise((resolve) => {
      const socket = net.connect(served.port, '127.0.0.1', () => socket.write(`${CHUNKED()}10\r\nabc`, () => { socket.resetAndDestroy(); resolve(); }));
      socket.on('error', () => {});
    });
    const next = await exchange(served.port, [VALID], { until: (got) => bodies(got).length === 1 });
    assert.deepEqual(bodies(next.text), ['abcde\nfg']);
  });
});

describe('with SERVER_HTTP2=true (the first bytes choose the protocol)', () => {
  let served;
  before(async () => { served = await serve({ SERVER_HTTP2: 'true' }); });
  after(() => served.server.close());

  test('HTTP/1.1 cut anywhere: the 413 at once; valid requests answered', async () => {
    for (const pieces of [[PAST], bytes(PAST), ...cutsInTwo(PAST).slice(0, 30)]) assertRefusedAtOnce(await exchange(served.port, pieces, { gapMs: 2 }));
    const result = await exchange(served.port, bytes(VALID + GET), { until: (got) => bodies(got).length === 2 });
    assert.deepEqual(bodies(result.text), ['abcde\nfg', 'hello']);
  });

  test('h2c with prior knowledge still serves, bodies included', async () => {
    const session = http2.connect(`http://127.0.0.1:${served.port}`);
    try {
      const answer = await new Promise((resolve, reject) => {
        const stream = session.request({ ':method': 'POST', ':path': '/echo', 'content-type': 'text/plain' });
        let status;
        const chunks = [];
        stream.on('response', (headers) => { status = headers[':status']; });
        stream.on('data', (chunk) => chunks.push(chunk));
        stream.on('end', () => resolve({ status, body: Buffer.concat(chunks).toString() }));
        stream.on('error', reject);
        stream.end('over h2c');
      });
      assert.deepEqual(answer, { status: 200, body: 'over h2c' });
    } finally {
      session.close();
    }
  });
});
