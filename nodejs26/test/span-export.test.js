// Shutdown does not wait on telemetry, as on the Python runtime: a real runtime whose trace
// collector is down (a closed port) or silent (accepts, never answers), stopped with SIGTERM
// with nothing in flight, ends within a second (the exporter alone waited
// OTEL_EXPORTER_OTLP_TRACES_TIMEOUT, 10 s by default, with a silent collector); the spans it
// could not deliver are counted in /metrics and logged in one line.
import assert from 'node:assert/strict';
import net from 'node:net';
import { test } from 'node:test';
import { freePort, functions, startRuntime } from './helpers.js';

// One second as the issue asks, and half a second more for a loaded 2-core machine.
const EXIT_WITHIN_MS = 1500;
const LOGGED = 'could not be delivered to TRACE_COLLECTOR_ENDPOINT';

function silentCollector() {
  const sockets = [];
  const server = net.createServer((socket) => sockets.push(socket));
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({
    port: server.address().port,
    close: () => { for (const socket of sockets) socket.destroy(); server.close(); },
  })));
}

async function dropped(runtime) {
  const text = await (await runtime.fetch('/metrics')).text();
  const line = text.split('\n').find((row) => row.startsWith('function_spans_dropped_total '));
  return line === undefined ? null : Number(line.split(' ')[1]);
}

for (const collector of ['down', 'silent']) {
  test(`SIGTERM ends the runtime within a second, its collector ${collector}`, async () => {
    const silent = collector === 'silent' ? await silentCollector() : null;
    const port = silent ? silent.port : await freePort();
    const runtime = await startRuntime({
      HANDLER_FOLDER: functions('graceful'),
      TRACE_COLLECTOR_ENDPOINT: `http://127.0.0.1:${port}/v1/traces`,
      OTEL_BSP_SCHEDULE_DELAY: '100',
      OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: '3000', // exports fail, and are counted, while the runtime serves; twice the bound at exit
    });
    try {
      for (let i = 0; i < 20; i += 1) assert.equal((await runtime.fetch('/')).status, 200);
      assert.notEqual(await dropped(runtime), null, 'with tracing on, /metrics has the counter');
      const deadline = Date.now() + 10_000;
      while ((await dropped(runtime)) === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      assert.ok((await dropped(runtime)) > 0, 'a failed export counts its spans while the runtime serves');
      assert.equal((await runtime.fetch('/')).status, 200); // a span still batched at SIGTERM
      const signalled = Date.now();
      runtime.child.kill('SIGTERM');
      await runtime.exitedPromise;
      const took = Date.now() - signalled;
      assert.ok(took <= EXIT_WITHIN_MS, `the runtime ended ${took} ms after SIGTERM, nothing in flight`);
      assert.equal(runtime.stdout.split(LOGGED).length - 1, 1, runtime.stdout);
    } finally {
      await runtime.stop();
      silent?.close();
    }
  });
}
