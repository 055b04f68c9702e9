// In-process cost per request of the nodejs26 runtime, no sockets: node:http's view of each handler.
//
// Every variant is called the way node:http calls a request listener: a fresh
// IncomingMessage (a GET, its body already ended) and ServerResponse, the
// listener called, and the response awaited until it has finished writing
// (into the response's own buffer: there is no socket, so the listener's end()
// call is the moment). The bare node:http
// hello world is the reference; nodejs26 runs with its default settings, and
// with the metrics and the call timeout off (the call path alone). Variants are
// interleaved round by round and the median round is reported, as CPU time
// (process.cpuUsage: every thread) and wall time per request.
//
//   node bench/node_inprocess.mjs --json out.json [--rounds 7] [--calls 20000]
import { writeFileSync } from 'node:fs';
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const BENCH = path.dirname(fileURLToPath(import.meta.url));
const RUNTIME = path.join(BENCH, '..', 'nodejs26', 'lib');
const HELLO = path.join(BENCH, 'apps', 'hello-nodejs26');
const BODY = Buffer.from('Hello, world!');
const HEADERS = { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': BODY.length };

const { values } = parseArgs({ options: { json: { type: 'string' }, rounds: { type: 'string', default: '7' }, calls: { type: 'string', default: '20000' } } });

function bare(request, response) {
  response.writeHead(200, HEADERS);
  response.end(BODY);
}

async function nodejs26(settings) {
  await import(path.join(RUNTIME, '..', 'sdk', 'register.js'));
  const { fromEnv } = await import(path.join(RUNTIME, 'config.js'));
  const { loadFunction } = await import(path.join(RUNTIME, 'loader.js'));
  const { Runtime } = await import(path.join(RUNTIME, 'server.js'));
  const { setActiveConfig } = await import(path.join(RUNTIME, '..', 'sdk', 'index.js'));
  const config = fromEnv({ HANDLER_FOLDER: HELLO, ...settings });
  setActiveConfig(config);
  return new Runtime(config, await loadFunction(config)).handle;
}

/** One call as node:http makes it, resolved when the response has been ended (its bytes written to its buffer). */
function call(listener) {
  const socket = new Socket();
  const request = new IncomingMessage(socket);
  request.method = 'GET';
  request.url = '/';
  request.httpVersionMajor = 1;
  request.httpVersionMinor = 1;
  request.httpVersion = '1.1';
  request.headers = { host: '127.0.0.1:8080', 'user-agent': 'bench', accept: '*/*' };
  request.rawHeaders = ['Host', '127.0.0.1:8080', 'User-Agent', 'bench', 'Accept', '*/*'];
  request.complete = true;
  request.push(null);
  const response = new ServerResponse(request);
  return new Promise((resolve, reject) => {
    // Without a socket node:http never emits 'finish'; the end() call is the moment.
    const end = response.end;
    response.end = function ended(...args) {
      const result = end.apply(this, args);
      // node:http emits 'close' once a response is done; the runtime releases the call's
      // in-flight slot (SERVER_MAX_INFLIGHT) then.
      response.emit('close');
      if (response.statusCode !== 200) reject(new Error(`status ${response.statusCode}`));
      else resolve();
      return result;
    };
    listener(request, response);
  });
}

async function measure(listener, calls) {
  const cpu = process.cpuUsage();
  const began = process.hrtime.bigint();
  for (let i = 0; i < calls; i += 1) await call(listener);
  const wall = Number(process.hrtime.bigint() - began) / 1000 / calls;
  const used = process.cpuUsage(cpu);
  return { us: wall, cpu_us: (used.user + used.system) / calls };
}

const median = (numbers) => { const sorted = [...numbers].sort((a, b) => a - b); return sorted[Math.floor(sorted.length / 2)]; };

const variants = [
  ['node-bare', 'bare node:http hello world', bare],
  ['node-call-path', 'nodejs26 call path (metrics and call timeout off)', await nodejs26({ SERVER_METRICS: 'false', SERVER_CALL_TIMEOUT: '0' })],
  ['node-default', 'nodejs26 default settings (metrics, call timeout)', await nodejs26({})],
];
const calls = Number(values.calls);
const samples = new Map(variants.map(([id]) => [id, []]));
for (const [, , listener] of variants) await measure(listener, Math.min(calls, 2000)); // warm-up: JIT, caches
for (let round = 0; round < Number(values.rounds); round += 1) {
  for (const [id, , listener] of round % 2 ? [...variants].reverse() : variants) samples.get(id).push(await measure(listener, calls));
}
const rows = variants.map(([id, label]) => {
  const runs = samples.get(id);
  return { id, label, us: Number(median(runs.map((r) => r.us)).toFixed(3)), cpu_us: Number(median(runs.map((r) => r.cpu_us)).toFixed(3)) };
});
if (values.json) writeFileSync(values.json, JSON.stringify(rows, null, 2));
for (const row of rows) console.log(`${row.label.padEnd(55)} ${row.cpu_us.toFixed(2).padStart(8)} µs CPU ${row.us.toFixed(2).padStart(8)} µs wall`);
process.exit(0);
