// The framing corpus's function on nodejs26: every call is one JSON line (method, path,
// body) appended to the file FRAMING_CALLS names; the answer is the body's length.
import { appendFileSync } from 'node:fs';

export function main(req) {
  const body = req.rawBody ?? Buffer.alloc(0);
  appendFileSync(process.env.FRAMING_CALLS, JSON.stringify({ method: req.method, path: req.path, body: body.toString('latin1') }) + '\n');
  return String(body.length);
}
