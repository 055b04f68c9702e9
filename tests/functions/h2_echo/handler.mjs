// handler.py's function for the nodejs26 runtime: answers with what it was given and writes
// each call to SEEN_LOG (tests/reliability/test_http2.py runs its HTTP/2 cases on both runtimes).
import { appendFileSync } from 'node:fs';

const CHUNK = Buffer.alloc(16384, 'x');

function record(req) {
  const seen = {
    path: req.path,
    protocol: req.httpVersion === '2.0' ? 'HTTP/2' : `HTTP/${req.httpVersion}`,
    body: req.getData().toString('latin1'),
    headers: Object.fromEntries(Object.entries(req.headers).map(([name, value]) => [name.toLowerCase(), Array.isArray(value) ? value.join(', ') : value])),
  };
  appendFileSync(process.env.SEEN_LOG, `${JSON.stringify(seen)}\n`);
  return seen;
}

export async function main(req) {
  const seen = record(req);
  if (req.path === '/sleep') await new Promise((resolve) => setTimeout(resolve, Number(req.query.s ?? '0.2') * 1000));
  if (req.path === '/stream') return (function* chunks() { for (let n = 0; n < Number(req.query.chunks ?? '8'); n += 1) yield CHUNK; })();
  return seen;
}
