// What HTTP cannot see of the slow-client limits (lib/connections.js): the
// runtime's own counts go back to rest after every kind of call, so no
// connection and no call stays counted (a leak there would show only after a
// thousand calls, as 503s). The answers themselves are checked over sockets
// by the conformance kit (tests/conformance/test_slow_clients.py).
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { after, before, test } from 'node:test';
import { fromEnv } from '../lib/config.js';
import { loadFunction } from '../lib/loader.js';
import { configureLogging } from '../lib/logs.js';
import { SWEEP_MS } from '../lib/connections.js';
import { Runtime } from '../lib/server.js';
import { freePort, functions, rawRequest } from './helpers.js';

let runtime;
let port;

before(async () => {
  const config = fromEnv({ HANDLER_FOLDER: functions('paths'), SERVER_HOST: '127.0.0.1', SERVER_PORT: String(await freePort()), SERVER_MAX_INFLIGHT: '2', SERVER_CALL_TIMEOUT: '1', SERVER_MAX_BODY_SIZE: '1000' });
  const logged = [];
  configureLogging(config, (line) => logged.push(line)); // the failing calls' records, kept out of the test's output
  runtime = new Runtime(config, await loadFunction(config));
  const server = await runtime.listen();
  port = server.address().port;
});

after(async () => {
  await runtime?.stop();
});

function get(agent, path, options = {}) {
  return new Promise((resolve, reject) => {
    const request = http.request({ host: '127.0.0.1', port, path, agent, ...options }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => { body += chunk; });
      response.on('end', () => resolve({ status: response.statusCode, body }));
    });
    request.on('error', reject);
    request.end(options.body);
  });
}

/** Poll (bounded) until the runtime's counts are at rest: nothing in flight, every open connection waiting. */
async function atRest(what) {
  const connections = runtime.connections;
  const deadline = Date.now() + 3000;
  while (Date.now() < deadline) {
    if (runtime.inflight === 0 && connections.waitingCount() === connections.open.size && connections.receiving.size === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  assert.fail(`${what}: ${runtime.inflight} in flight, ${connections.waitingCount()} of ${connections.open.size} connections waiting, ${connections.receiving.size} reading a body`);
}

test('keep-alive calls of every kind leave nothing counted, and the connection waits again', async () => {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const answers = [];
    for (const path of ['/hello', '/healthz', '/metrics', '/favicon.ico', '/raise', '/stream', '/express/write', '/express/later', '/bad-return']) {
      answers.push((await get(agent, path)).status);
    }
    answers.push((await get(agent, '/echo', { method: 'POST', body: 'x'.repeat(500), headers: { 'content-type': 'text/plain' } })).status);
    answers.push((await get(agent, '/sleep?seconds=2')).status); // answered 408 at the call timeout
    assert.deepEqual(answers, [200, 200, 200, 204, 500, 200, 200, 202, 500, 200, 408]);
    await atRest('after keep-alive calls');
    assert.equal(runtime.connections.open.size, 1);
  } finally {
    agent.destroy();
  }
});

test('refused, oversized and abandoned calls leave nothing counted', async () => {
  const slow = [get(undefined, '/sleep?seconds=0.3'), get(undefined, '/sleep?seconds=0.3')];
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal((await get(undefined, '/hello')).status, 503);
  assert.deepEqual((await Promise.all(slow)).map((answer) => answer.status), [200, 200]);
  assert.equal((await get(undefined, '/size', { method: 'POST', body: 'x'.repeat(2000) })).status, 413);
  // A client that leaves in the middle of a call, and one that leaves in the middle of its body.
  const gone = net.connect(port, '127.0.0.1');
  gone.write('GET /sleep?seconds=0.2 HTTP/1.1\r\nHost: x\r\n\r\n');
  const halfBody = net.connect(port, '127.0.0.1');
  halfBody.write('POST /size HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nab');
  await new Promise((resolve) => setTimeout(resolve, 50));
  gone.destroy();
  halfBody.destroy();
  assert.match(await rawRequest(port, 'GET /hello HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'), /^HTTP\/1\.1 200 /);
  await atRest('after refused and abandoned calls');
});

test('node:http leaves a body-less request undrained once the runtime has marked it read (Call.answer)', async () => {
  const seen = [];
  const keep = (incoming) => seen.push(incoming);
  runtime.server.on('request', keep);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    assert.equal((await get(agent, '/hello')).status, 200);
    assert.equal((await get(agent, '/echo', { method: 'POST', body: 'x', headers: { 'content-type': 'text/plain' } })).status, 200);
    await new Promise((resolve) => setTimeout(resolve, 50)); // node:http's drain would have run by now
    // Had node:http drained the first (a resume, then 'end'), its stream would have ended.
    assert.deepEqual(seen.map((incoming) => [incoming.url, incoming.readableEnded]), [['/hello', false], ['/echo', true]]);
  } finally {
    runtime.server.off('request', keep);
    agent.destroy();
  }
});

test("a call's own socket timeout ends with its answer: the next call on the connection is not cut off by it", async () => {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    assert.equal((await get(agent, '/raw/timeout?ms=100')).status, 200);
    assert.deepEqual(await get(agent, '/sleep?seconds=0.3'), { status: 200, body: 'slept' });
  } finally {
    agent.destroy();
  }
});

/** A raw connection, once connected, and a promise of its close (by the runtime). */
async function openConnection() {
  const socket = net.connect(port, '127.0.0.1');
  const closed = new Promise((resolve) => socket.once('close', resolve));
  socket.on('error', () => {});
  await new Promise((resolve) => socket.once('connect', resolve));
  return { socket, closed };
}

test('the connection made room for is the one that has waited longest; a call puts its connection last in line', async () => {
  const before = new Set(runtime.connections.open);
  const [first, second, third] = [await openConnection(), await openConnection(), await openConnection()];
  const clients = { first, second, third };
  const deadline = Date.now() + 3000;
  while (runtime.connections.open.size < before.size + 3 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
  // The other tests' connections, if any are still open, wait longer than these three: close them first.
  for (const socket of before) if (!socket.destroyed) assert.equal(runtime.connections.evictOne(), true);
  // A call on the first connection: once answered, it waits again, behind the other two.
  first.socket.write('GET /hello HTTP/1.1\r\nHost: x\r\n\r\n');
  await new Promise((resolve) => first.socket.once('data', resolve));
  await atRest('after the call on the first connection');
  const order = [];
  for (const [name, client] of Object.entries(clients)) client.closed.then(() => order.push(name));
  for (let at = 0; at < 3; at += 1) {
    assert.equal(runtime.connections.evictOne(), true);
    await new Promise((resolve) => setTimeout(resolve, 30));
  }
  assert.equal(runtime.connections.evictOne(), false, 'no connection was left to close');
  assert.deepEqual(order, ['second', 'third', 'first']);
});

test('the keep-alive timeout closes only a connection waiting after an answer; a silent one and a begun head are the header timeout\'s', { timeout: 5000 }, async () => {
  const config = fromEnv({ HANDLER_FOLDER: functions('paths'), SERVER_HOST: '127.0.0.1', SERVER_PORT: String(await freePort()), SERVER_KEEPALIVE_TIMEOUT: '0.3', SERVER_HEADER_TIMEOUT: '5' });
  const own = new Runtime(config, await loadFunction(config));
  const server = await own.listen();
  const sockets = [];
  const connect = async () => {
    const socket = net.connect(server.address().port, '127.0.0.1');
    sockets.push(socket);
    socket.on('error', () => {});
    const closed = new Promise((resolve) => socket.once('close', () => resolve(performance.now())));
    await new Promise((resolve) => socket.once('connect', resolve));
    return { socket, closed };
  };
  try {
    const [answered, silent, begun] = [await connect(), await connect(), await connect()];
    answered.socket.write('GET /hello HTTP/1.1\r\nHost: x\r\n\r\n');
    await new Promise((resolve) => answered.socket.once('data', resolve));
    const answeredAt = performance.now();
    begun.socket.write('GET /hello HTTP/1.1\r\nHost:');
    const waited = (await answered.closed) - answeredAt;
    assert.ok(waited >= 300 && waited < 300 + 3 * SWEEP_MS, `closed ${waited.toFixed(0)} ms after its answer`);
    await new Promise((resolve) => setTimeout(resolve, 3 * SWEEP_MS));
    assert.deepEqual([silent.socket.destroyed, begun.socket.destroyed], [false, false]);
  } finally {
    for (const socket of sockets) socket.destroy();
    await own.stop();
  }
});
