// Answers whose head node:http refuses, interim and bodiless statuses, framing fields a function sets:
// what test/answers.test.js asks of the runtime (one case per path).
export function main(req, res) {
  switch (req.path) {
    case '/ok': return 'ok';
    case '/ctl': res.setHeader('X-A', 'a\x01b'); return 'x';
    case '/ctl-send': res.set('X-A', 'a\x7fb'); res.send('x'); return undefined;
    case '/ctl-write': res.setHeader('X-A', 'a\x01b'); res.write('x'); res.end(); return undefined;
    case '/ctl-stream': res.setHeader('X-A', 'a\x01b'); return (async function* chunks() { yield 'a'; })();
    case '/bad-name': res.setHeader('bad name', 'v'); return 'x';
    case '/euro': res.setHeader('X-A', '\u20ac'); return 'x';
    case '/latin1': res.setHeader('X-A', '\u00fc'); return 'x';
    case '/interim': res.setCode(Number(req.query.code)); return 'body1xx';
    case '/interim-stream': res.setCode(103); return (async function* chunks() { yield 'a'; })();
    case '/code-204': res.setCode(204); res.setHeader('Content-Type', 'text/html'); return 'body204';
    case '/response-null': return new Response(null, { status: Number(req.query.code) });
    case '/response-head': return new Response(null, { headers: { 'content-length': '1234' } });
    case '/te': res.setHeader('Transfer-Encoding', req.query.value); return 'abc';
    case '/content-length': res.setHeader('Content-Length', '99'); return 'abc';
    case '/response-length': return new Response('hello', { headers: { 'content-length': '99' } });
    case '/keep-alive': res.setHeader('Connection', 'keep-alive'); res.setHeader('Keep-Alive', 'timeout=5'); return 'kept';
    case '/close': res.setHeader('Connection', 'close'); return 'closing';
    case '/redirect': res.redirect('/caf\u00e9 %41%zz'); return undefined;
    default: res.setCode(404); return 'no such path';
  }
}
