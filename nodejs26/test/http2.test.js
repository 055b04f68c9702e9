// HTTP/2 without TLS beside HTTP/1.1 on one port (lib/http2.js): every stream one call through the
// same steps as an HTTP/1.1 request, and node:http2's limits against abuse. The raw-frame cases
// (malformed requests, floods) run against this runtime in tests/reliability/test_http2.py.
import assert from 'node:assert/strict';
import http from 'node:http';
import http2 from 'node:http2';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { fromEnv } from '../lib/config.js';
import { loadFunction } from '../lib/loader.js';
import { configureLogging } from '../lib/logs.js';
import { PREFACE } from '../lib/http2.js';
import { Runtime } from '../lib/server.js';
import { freePort, functions, rawRequest, startRuntime } from './helpers.js';

const { NGHTTP2_CANCEL } = http2.constants;

async function serve(settings = {}) {
  const config = fromEnv({ HANDLER_FOLDER: functions('paths'), SERVER_HOST: '127.0.0.1', SERVER_PORT: String(await freePort()), SERVER_HTTP2: 'true', ...settings });
  const logged = [];
  configureLogging(config, (line) => logged.push(line));
  const runtime = new Runtime(config, await loadFunction(config));
  const server = await runtime.listen();
  return { runtime, port: server.address().port, logged };
}

/** One stream: its status, headers, body and how it ended (rstCode 0: ended normally). */
function exchange(session, path, { method = 'GET', body, headers = {}, endStream } = {}) {
  return new Promise((resolve) => {
    const stream = session.request({ ':method': method, ':path': path, ...headers }, { endStream: endStream ?? body === undefined });
    let head = null;
    const chunks = [];
    stream.on('response', (received) => { head = received; });
    stream.on('data', (chunk) => chunks.push(chunk));
    stream.on('error', () => {});
    stream.on('close', () => resolve({ status: head?.[':status'], headers: head, body: Buffer.concat(chunks).toString(), rstCode: stream.rstCode }));
    if (body !== undefined) stream.end(body);
  });
}

function connect(port, options) {
  return new Promise((resolve, reject) => {
    const session = http2.connect(`http://127.0.0.1:${port}`, options);
    session.once('remoteSettings', () => resolve(session));
    session.once('error', reject);
  });
}

/** Poll (bounded) until `predicate()` holds. */
async function eventually(predicate, what, ms = 3000) {
  const deadline = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > deadline) assert.fail(`${what}: not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function h1get(port, path) {
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path }, (response) => {
      let body = '';
      response.on('data', (chunk) => { body += chunk; });
      response.on('end', () => resolve({ status: response.statusCode, body }));
    }).on('error', reject);
  });
}

describe('h2c with SERVER_HTTP2=true', () => {
  let served;
  before(async () => { served = await serve({ SERVER_CALL_TIMEOUT: '1', SERVER_MAX_BODY_SIZE: '1000', SERVER_HTTP2_MAX_STREAMS: '50' }); });
  after(async () => { await served.runtime.stop(); });

  test('a connection that opens with the preface is served over HTTP/2, any other over HTTP/1.1, on one port', async () => {
    const session = await connect(served.port);
    try {
      const answer = await exchange(session, '/hello');
      assert.equal(answer.status, 200);
      assert.equal(answer.body, 'hello');
      assert.match(answer.headers['x-request-id'], /^[0-9a-f]{32}$/);
    } finally {
      session.close();
    }
    assert.deepEqual(await h1get(served.port, '/hello'), { status: 200, body: 'hello' });
  });

  test('the function sees the request as over HTTP/1.1: no pseudo-header fields, host from :authority', async () => {
    const session = await connect(served.port);
    try {
      const seen = JSON.parse((await exchange(session, '/headers-seen', { headers: { 'x-one': '1', cookie: ['a=1', 'b=2'] } })).body);
      assert.deepEqual(Object.keys(seen).filter((name) => name.startsWith(':')), []);
      assert.equal(seen.host, `127.0.0.1:${served.port}`);
      assert.equal(seen['x-one'], '1');
      assert.equal(seen.cookie, 'a=1; b=2');
    } finally {
      session.close();
    }
  });

  test('the streams of one connection are calls at once, each one call with its own id, counted once', async () => {
    const session = await connect(served.port);
    try {
      const metrics = async () => Number(/^function_calls_total\{method="GET"\} (\d+)$/m.exec((await exchange(session, '/metrics')).body)[1]);
      const before = await metrics();
      const began = performance.now();
      const answers = await Promise.all(Array.from({ length: 20 }, () => exchange(session, '/sleep?seconds=0.3')));
      const took = performance.now() - began;
      assert.deepEqual(new Set(answers.map((answer) => answer.body)), new Set(['slept']));
      assert.equal(new Set(answers.map((answer) => answer.headers['x-request-id'])).size, 20);
      assert.ok(took < 1500, `20 calls of 0.3 s on one connection took ${took.toFixed(0)} ms: they did not run at once`);
      assert.equal(await metrics(), before + 20);
    } finally {
      session.close();
    }
    await eventually(() => served.runtime.inflight === 0, 'no call left in flight');
  });

  test('the body limit and the call timeout hold for a stream', async () => {
    const session = await connect(served.port);
    try {
      assert.equal((await exchange(session, '/size', { method: 'POST', body: Buffer.alloc(1000) })).body, '1000');
      assert.equal((await exchange(session, '/size', { method: 'POST', body: Buffer.alloc(1001), headers: { 'content-length': '1001' } })).status, 413);
      // No content-length: the body is counted as its DATA frames arrive.
      assert.equal((await exchange(session, '/size', { method: 'POST', body: Buffer.alloc(1500) })).status, 413);
      const began = performance.now();
      const late = await exchange(session, '/sleep?seconds=3');
      assert.deepEqual([late.status, late.body], [408, 'Timeout while processing the function']);
      assert.ok(performance.now() - began < 1900);
      assert.equal((await exchange(session, '/hello')).body, 'hello', 'the connection serves on');
    } finally {
      session.close();
    }
  });

  test('the limits are announced: streams per connection and the header list', async () => {
    const session = await connect(served.port);
    try {
      assert.equal(session.remoteSettings.maxConcurrentStreams, 50);
      assert.equal(session.remoteSettings.maxHeaderListSize, http.maxHeaderSize);
      assert.equal(session.remoteSettings.enablePush, false);
    } finally {
      session.close();
    }
  });

  test('a header list over the limit never reaches the function', async () => {
    const session = await connect(served.port, { maxHeaderListSize: 1 << 20 });
    session.on('error', () => {});
    try {
      const answer = await exchange(session, '/log?id=too-big', { headers: { 'x-big': 'v'.repeat(http.maxHeaderSize + 100) } });
      assert.notEqual(answer.status, 200, JSON.stringify(answer));
      assert.ok(!served.logged.some((line) => line.includes('node log line too-big')), 'the function ran');
    } finally {
      session.destroy();
    }
  });

  test('connection fields a function sets are left out of an HTTP/2 answer', async () => {
    const session = await connect(served.port);
    try {
      const answer = await exchange(session, '/connection-fields');
      assert.deepEqual([answer.status, answer.body, answer.headers['x-kept']], [200, 'fields', 'yes']);
      assert.equal(answer.headers.connection, undefined);
    } finally {
      session.close();
    }
  });

  test('a failure after streaming began resets the stream, and the connection serves on', async () => {
    const session = await connect(served.port);
    try {
      const answer = await exchange(session, '/stream-fail');
      assert.notEqual(answer.rstCode, 0, 'the truncated answer looks complete');
      assert.equal((await exchange(session, '/hello')).body, 'hello');
    } finally {
      session.close();
    }
  });
});

describe('h2c limits in time', () => {
  let served;
  before(async () => { served = await serve({ SERVER_HEADER_TIMEOUT: '0.5', SERVER_KEEPALIVE_TIMEOUT: '0.5', SERVER_BODY_TIMEOUT: '0.5', SERVER_SEND_TIMEOUT: '0.5' }); });
  after(async () => { await served.runtime.stop(); });

  /** When the runtime closes `socket`, in ms from now. */
  function closedAfter(socket) {
    const began = performance.now();
    return new Promise((resolve) => { socket.on('close', () => resolve(performance.now() - began)); socket.on('error', () => {}); socket.resume(); });
  }

  test('a connection that sends nothing, or only part of the preface, is closed quietly at the header timeout', async () => {
    for (const opening of [Buffer.alloc(0), PREFACE.subarray(0, 10)]) {
      const socket = net.connect(served.port, '127.0.0.1');
      socket.write(opening);
      const took = await closedAfter(socket);
      assert.ok(took > 400 && took < 1500, `closed after ${took.toFixed(0)} ms`);
    }
  });

  test('an HTTP/2 connection that opens no stream, or has none open, is closed after its timeout', async () => {
    for (const path of [null, '/hello']) {
      const session = await connect(served.port);
      if (path !== null) await exchange(session, path);
      const began = performance.now();
      await new Promise((resolve) => session.on('close', resolve));
      const took = performance.now() - began;
      assert.ok(took < 1500, `${path ?? 'no stream'}: closed after ${took.toFixed(0)} ms`);
    }
  });

  test('a stream whose body pauses gets 408 and is ended; the connection serves on', async () => {
    const session = await connect(served.port);
    try {
      const stream = session.request({ ':method': 'POST', ':path': '/size' }, { endStream: false });
      stream.write('part');
      const answer = await new Promise((resolve) => {
        let status;
        let body = '';
        stream.on('response', (head) => { status = head[':status']; });
        stream.on('data', (chunk) => { body += chunk; });
        stream.on('error', () => {});
        stream.on('close', () => resolve({ status, body }));
      });
      assert.deepEqual(answer, { status: 408, body: 'the request did not arrive in time' });
      assert.equal((await exchange(session, '/hello')).body, 'hello');
    } finally {
      session.close();
    }
    await eventually(() => served.runtime.inflight === 0, 'no call left in flight');
  });

  test('a stream whose client keeps its window shut is reset after the send timeout; the call is released', async () => {
    const session = await connect(served.port, { settings: { initialWindowSize: 0 } });
    try {
      const answer = await exchange(session, '/large?bytes=100000');
      assert.equal(answer.rstCode, NGHTTP2_CANCEL);
      await eventually(() => served.runtime.inflight === 0, 'the call released');
    } finally {
      session.destroy();
    }
  });
});

/** An HTTP/2 frame (RFC 9113 section 4.1). */
function frame(type, flags, streamId, payload = Buffer.alloc(0)) {
  const head = Buffer.alloc(9);
  head.writeUIntBE(payload.length, 0, 3);
  head[3] = type;
  head[4] = flags;
  head.writeUInt32BE(streamId, 5);
  return Buffer.concat([head, payload]);
}

/** A GET of `path` on stream 1, its header block HPACK-encoded by hand: indexed :method and :scheme, literal :path. */
function getFrame(path) {
  const block = Buffer.concat([Buffer.from([0x82, 0x86, 0x44, path.length]), Buffer.from(path), Buffer.from([0x41, 1, 0x61])]);
  return frame(1, 0x5, 1, block); // HEADERS, END_STREAM | END_HEADERS
}

/** SETTINGS_INITIAL_WINDOW_SIZE = 0: the client takes no DATA until it says so. */
const SHUT_WINDOW = frame(4, 0, 0, Buffer.from([0, 4, 0, 0, 0, 0]));

/**
 * A client on a raw socket that opens an HTTP/2 connection, sends `frames`, waits until the server has
 * written `bytes` to it, then closes its side (a FIN) and reads on, as a client that left would.
 */
async function openAndLeave(port, frames, bytes) {
  const socket = net.connect(port, '127.0.0.1');
  socket.on('error', () => {});
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.write(Buffer.concat([PREFACE, frame(4, 0, 0), ...frames]));
  let received = 0;
  await new Promise((resolve) => {
    socket.on('data', (chunk) => {
      received += chunk.length;
      if (received >= bytes) resolve();
    });
  });
  socket.end();
  return socket;
}

describe('h2c lets go of a connection its client closed', () => {
  let served;
  before(async () => { served = await serve(); });
  after(async () => { await served.runtime.stop(); });

  // The cases of issue 46: held half-open (CLOSE-WAIT) about 10 s, 30 s and 60 s before.
  const cases = [
    ['with no stream opened', [], 9],
    ['after a stream was answered', [getFrame('/hello')], 60],
    ['while its answer waits on a window it keeps shut', [SHUT_WINDOW, getFrame('/large?bytes=100000')], 40],
  ];
  test('before its first bytes told its protocol', async () => {
    const socket = net.connect(served.port, '127.0.0.1');
    socket.on('error', () => {});
    socket.end(PREFACE.subarray(0, 10));
    await new Promise((resolve) => socket.once('finish', resolve));
    try {
      await eventually(() => served.runtime.connections.open.size === 0, 'the connection released', 1000);
    } finally {
      socket.destroy();
    }
  });

  for (const [name, frames, bytes] of cases) {
    test(name, async () => {
      const socket = await openAndLeave(served.port, frames, bytes);
      try {
        await eventually(() => served.runtime.connections.open.size === 0 && served.runtime.inflight === 0, 'the connection released', 1000);
      } finally {
        socket.destroy();
      }
    });
  }
});

test('SIGTERM with no call in flight exits at once: clients that left, and idle ones still connected', async () => {
  const runtime = await startRuntime({ HANDLER_FOLDER: functions('paths'), SERVER_HTTP2: 'true', SERVER_GRACEFUL_TIMEOUT: '20' });
  const sockets = [];
  const idle = await connect(runtime.port);
  idle.on('error', () => {});
  const agent = new http.Agent({ keepAlive: true });
  try {
    sockets.push(await openAndLeave(runtime.port, [], 9));
    sockets.push(await openAndLeave(runtime.port, [getFrame('/hello')], 60));
    sockets.push(await openAndLeave(runtime.port, [SHUT_WINDOW, getFrame('/large?bytes=100000')], 40));
    assert.equal((await exchange(idle, '/hello')).body, 'hello');
    // A client that reads on and never closes its side, even once the runtime has ended its own.
    const stays = net.connect({ port: runtime.port, host: '127.0.0.1', allowHalfOpen: true });
    stays.on('error', () => {});
    await new Promise((resolve) => stays.once('connect', resolve));
    stays.write(Buffer.concat([PREFACE, frame(4, 0, 0), getFrame('/hello')]));
    await new Promise((resolve) => stays.once('data', resolve));
    stays.on('data', () => {});
    sockets.push(stays);
    const kept = await new Promise((resolve, reject) => {
      http.get({ host: '127.0.0.1', port: runtime.port, path: '/hello', agent }, (response) => { response.resume(); response.on('end', () => resolve(response.statusCode)); }).on('error', reject);
    });
    assert.equal(kept, 200);
    const began = performance.now();
    const exited = await runtime.stop();
    const took = performance.now() - began;
    assert.deepEqual(exited, { code: 0, signal: null });
    assert.ok(took < 1000, `exited ${took.toFixed(0)} ms after SIGTERM`);
    assert.doesNotMatch(runtime.stdout, /still in flight/);
  } finally {
    for (const socket of sockets) socket.destroy();
    idle.destroy();
    agent.destroy();
    await runtime.stop('SIGKILL');
  }
});

test('SERVER_HTTP2 unset (the default) or false: HTTP/1.1 only, the preface is refused', async () => {
  for (const value of ['', 'false']) await http1Only(value);
});

async function http1Only(value) {
  const served = await serve({ SERVER_HTTP2: value });
  try {
    const answer = await rawRequest(served.port, PREFACE.toString('latin1'));
    assert.match(answer, /^HTTP\/1\.1 400 /);
    assert.deepEqual(await h1get(served.port, '/hello'), { status: 200, body: 'hello' });
  } finally {
    await served.runtime.stop();
  }
}
