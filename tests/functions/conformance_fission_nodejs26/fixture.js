// The conformance fixture's core paths as a Fission Node.js function (fn(context) -> {status, body, headers}).
const { cancelled } = require('sdk');

const SECRET = 'conformance-secret-7f3a';
const text = (status, body, headers = {}) => ({ status, body, headers: { 'Content-Type': 'text/plain', ...headers } });
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

module.exports = async function (context) {
  const req = context.request;
  const path = req.path;
  if (path === '/hello') return text(200, 'hello');
  if (path === '/json') return { status: 200, body: { a: 1, list: [1, 'two'], text: 'ü' } };
  if (path.startsWith('/status/')) {
    const code = Number(path.split('/').at(-1));
    return text(code, `status ${code}`);
  }
  if (path === '/headers') return { status: 200, body: '', headers: { 'X-Conformance': 'yes' } };
  if (path === '/echo') return { status: 200, body: req.rawBody, headers: { 'Content-Type': req.get('content-type') } };
  if (path === '/request') {
    const query = {};
    for (const [key, value] of Object.entries(req.query)) query[key] = [value].flat();
    return { status: 200, body: { method: req.method, path, query } };
  }
  if (path === '/raise') throw new Error(SECRET);
  if (path === '/sleep') {
    await sleep(Number(req.query.seconds ?? '1') * 1000);
    return text(200, 'slept');
  }
  if (path === '/size') return text(200, String(req.rawBody.length));
  if (path === '/log') {
    console.log('logged by the fission function');
    return text(200, req.get('x-request-id') ?? '');
  }
  if (path === '/cancel') {
    console.log('waiting for cancellation');
    for (let waited = 0; waited < 5000 && !cancelled(); waited += 20) await sleep(20);
    console.log(`cancelled: ${cancelled()}`);
    return text(200, 'done');
  }
  return text(200, `fixture ${req.method} ${path}`);
};
