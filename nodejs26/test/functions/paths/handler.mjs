// One function, many paths: what the HTTP-level tests of the runtime call.
import { emitCloudEvent, getCloudEvent, getLogger, getRequest, getTracer } from 'sdk';
import { CloudEvent } from 'cloudevents';

let isReady = true;
let readyLogs = false; // /ready?value=log: ready() logs which request asked
let isAlive = true;
let heard = []; // what /raw/listens heard of its request stream

export function main(req, res) {
  // Express style: answer from a callback after returning nothing (a sync function).
  if (req.path === '/express/later') {
    setTimeout(() => res.set({ 'X-Later': 'yes' }).status(202).send('later'), 20);
    return undefined;
  }
  if (req.path === '/express/twice') {
    res.send('first');
    setTimeout(() => res.send('second'), 10);
    return undefined;
  }
  if (req.path === '/express/throw-later') {
    setTimeout(() => { throw new Error('thrown-in-a-callback'); }, 10);
    return undefined;
  }
  if (req.path === '/express/reject-later') {
    setTimeout(() => Promise.reject(new Error('rejected-in-a-callback')), 10);
    return undefined;
  }
  return paths(req, res);
}

async function paths(req, res) {
  const path = req.path;
  switch (path) {
    case '/hello': return 'hello';
    case '/json': return { a: 1, list: [1, 'two'], text: 'ü' };
    case '/array': return [1, 2];
    case '/bytes': return Buffer.from([0, 1, 2]);
    case '/status': res.setCode(Number(req.query.code)); return `status ${req.query.code}`;
    case '/set-code': res.set_code(201).set_header('X-A', '1').setBody({ made: true }); return undefined;
    case '/text': res.setText('plain', 'text/csv'); return;
    case '/data': res.setData(Buffer.from('xyz')); return;
    case '/echo': res.setHeader('Content-Type', req.get('content-type') ?? 'application/octet-stream'); return req.getData();
    case '/request': return { method: req.method, path: req.path, query: Object.fromEntries([...new Set(req.args.keys())].map((k) => [k, req.args.getAll(k)])) };
    case '/body': return { body: Buffer.isBuffer(req.body) ? `buffer:${req.body.length}` : req.body === undefined ? null : req.body, type: typeof req.body };
    case '/raise': throw new Error('node-secret-7f3a');
    case '/reject': await new Promise((r) => setTimeout(r, 5)); throw new Error('node-secret-async');
    case '/throw-string': throw 'a string';
    case '/aborted': try { await new Promise((resolve, reject) => { const t = setTimeout(resolve, 5000); req.signal.addEventListener('abort', () => { clearTimeout(t); reject(req.signal.reason); }); }); } catch { getLogger().info('aborted at the timeout'); } return 'late';
    case '/sleep': await new Promise((r) => setTimeout(r, Number(req.query.seconds) * 1000)); return 'slept';
    case '/spin': { const until = Date.now() + Number(req.query.seconds) * 1000; while (Date.now() < until); return 'spun'; }
    case '/size': return String(req.getData().length);
    case '/log': getLogger().info(`node log line ${req.query.id}`); console.log('console line %s', req.query.id); return 'logged';
    case '/stream': return (async function* chunks() { yield 'a'; await new Promise((r) => setTimeout(r, 5)); yield Buffer.from('b'); yield 'c'; })();
    case '/stream-fail': return (async function* chunks() { yield 'first'; await new Promise((r) => setTimeout(r, 5)); throw new Error('stream-secret'); })();
    case '/response': return new Response('from fetch api', { status: 202, headers: { 'x-web': 'yes', 'content-type': 'text/x-web' } });
    case '/sdk-request': return { same: getRequest() === req, tracer: typeof getTracer().startSpan };
    case '/cloudevent/echo': { const e = getCloudEvent(); return e === null ? { cloudevent: null } : { cloudevent: { type: e.type, source: e.source, id: e.id, specversion: e.specversion, conformanceext: e.conformanceext }, data: e.data, same: req.cloudEvent === e }; }
    case '/cloudevent/reply': return new CloudEvent({ type: 'node.reply', source: '/node', data: { ok: true } });
    case '/cloudevent/emit': await emitCloudEvent('node.emitted', '/node', { n: Number(req.query.n) }, { subject: 'sub' }); res.setCode(204); return;
    case '/raw/listens': heard = []; req.raw.on('end', () => heard.push('end')); req.raw.on('close', () => heard.push('close')); return 'listening';
    case '/raw/heard': return heard;
    case '/raw/timeout': req.raw.setTimeout(Number(req.query.ms)); return 'timed';
    case '/express/send': res.status(201).send('sent'); return;
    case '/express/json': res.json({ j: 1 }); return;
    case '/express/sendStatus': res.sendStatus(404); return;
    case '/express/end': res.statusCode = 200; res.setHeader('Content-Type', 'text/html'); res.end('<b>end</b>'); return;
    case '/express/write': res.write('one,'); setTimeout(() => { res.write('two'); res.end(); }, 10); return;
    case '/express/redirect': res.redirect('/hello'); return;
    case '/ready': isReady = req.query.value !== 'false'; readyLogs = req.query.value === 'log'; return 'set';
    case '/alive': isAlive = req.query.value === 'true'; return 'set';
    case '/bad-return': return () => 1;
    case '/headers-seen': return req.headers;
    case '/connection-fields': res.setHeader('Connection', 'close'); res.setHeader('Keep-Alive', 'timeout=5'); res.setHeader('X-Kept', 'yes'); return 'fields';
    case '/large': return Buffer.alloc(Number(req.query.bytes), 120);
    default: res.setCode(404); return 'no such path';
  }
}

export function ready() {
  if (readyLogs) getLogger().info(`readiness asked on ${getRequest()?.path}`);
  return isReady || 'not ready yet';
}
export function alive() { return isAlive; }
