// SERVER_DEBUG_PORT: the Node inspector answers a debugger (the inspector protocol over
// WebSocket, as VS Code's js-debug adapter speaks it) while the function serves.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { freePort, functions, runToExit, startRuntime } from './helpers.js';

/** One inspector-protocol exchange: send `method`, wait for the answer with the same id. */
function ask(socket, id, method, params = {}) {
  return new Promise((resolve, reject) => {
    const answered = (message) => {
      const data = JSON.parse(message.data);
      if (data.id !== id) return;
      socket.removeEventListener('message', answered);
      if (data.error) reject(new Error(JSON.stringify(data.error))); else resolve(data.result);
    };
    socket.addEventListener('message', answered);
    socket.send(JSON.stringify({ id, method, params }));
  });
}

test('a debugger attaches to the inspector and is answered while the function serves', async () => {
  const debugPort = await freePort();
  const runtime = await startRuntime({ HANDLER_FOLDER: functions('pid'), SERVER_DEBUG_PORT: String(debugPort) });
  try {
    const line = runtime.records().find((r) => r.message.startsWith('Debugger (Node inspector) listening'));
    assert.ok(line, runtime.stdout);
    const [target] = await (await fetch(`http://127.0.0.1:${debugPort}/json/list`)).json();
    const socket = new WebSocket(target.webSocketDebuggerUrl);
    await new Promise((resolve, reject) => { socket.onopen = resolve; socket.onerror = reject; });
    try {
      await ask(socket, 1, 'Debugger.enable');
      const evaluated = await ask(socket, 2, 'Runtime.evaluate', { expression: 'process.pid' });
      const pid = await (await runtime.fetch('/')).text();
      assert.equal(String(evaluated.result.value), pid, 'the debugger is in the process that serves');
      assert.equal(line.message, `Debugger (Node inspector) listening on 127.0.0.1:${debugPort}, pid ${pid}: attach a Node debugger (docs/servers.md#debugging)`);
    } finally {
      socket.close();
    }
    assert.ok(!runtime.stdout.includes('open beyond this machine'));
  } finally {
    await runtime.stop();
  }
});

test('another host than loopback is warned about', async () => {
  const debugPort = await freePort();
  const runtime = await startRuntime({ HANDLER_FOLDER: functions('pid'), SERVER_DEBUG_PORT: String(debugPort), SERVER_DEBUG_HOST: '0.0.0.0' });
  try {
    assert.ok(runtime.records().some((r) => r.level === 'WARNING' && r.message === `SERVER_DEBUG_HOST=0.0.0.0: the debugger port ${debugPort} is open beyond this machine; whoever reaches it can run any code in the function's process`), runtime.stdout);
  } finally {
    await runtime.stop();
  }
});

test('the debug port on the server port is one line, exit 2', async () => {
  const port = await freePort();
  const exited = await runToExit({ HANDLER_FOLDER: functions('pid'), SERVER_PORT: String(port), SERVER_DEBUG_PORT: String(port) });
  assert.equal(exited.code, 2);
  assert.equal(exited.stderr, `funcwsgi: error: SERVER_DEBUG_PORT=${port} is refused: the server already listens there; choose another port\n`);
});
