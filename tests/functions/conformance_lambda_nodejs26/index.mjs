// The conformance fixture's core paths as an AWS Lambda Node.js handler (payload format 2.0).
import { cancelled } from 'sdk';

const SECRET = 'conformance-secret-7f3a';
const text = (statusCode, body, headers = {}) => ({ statusCode, headers: { 'Content-Type': 'text/plain', ...headers }, body });
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export const handler = async (event, context) => {
  const path = event.rawPath;
  const body = event.body === undefined ? Buffer.alloc(0) : Buffer.from(event.body, event.isBase64Encoded ? 'base64' : 'utf8');
  if (path === '/hello') return text(200, 'hello');
  if (path === '/json') return { a: 1, list: [1, 'two'], text: 'ü' };
  if (path.startsWith('/status/')) {
    const code = Number(path.split('/').at(-1));
    return text(code, `status ${code}`);
  }
  if (path === '/headers') return { statusCode: 200, headers: { 'X-Conformance': 'yes' }, body: '' };
  if (path === '/echo') return { statusCode: 200, headers: { 'Content-Type': event.headers['content-type'] ?? 'application/octet-stream' }, body: body.toString('base64'), isBase64Encoded: true };
  if (path === '/request') {
    const query = {};
    for (const pair of event.rawQueryString.split('&').filter(Boolean)) {
      const [key, value = ''] = pair.split('=');
      (query[key] ??= []).push(value);
    }
    return { method: event.requestContext.http.method, path, query };
  }
  if (path === '/raise') throw new Error(SECRET);
  if (path === '/sleep') {
    await sleep(Number(event.queryStringParameters?.seconds ?? '1') * 1000);
    return text(200, 'slept');
  }
  if (path === '/size') return text(200, String(body.length));
  if (path === '/log') {
    console.log(`logged by ${context.functionName}`);
    return text(200, context.awsRequestId);
  }
  if (path === '/cancel') {
    console.log('waiting for cancellation');
    for (let waited = 0; waited < 5000 && !cancelled(); waited += 20) await sleep(20);
    console.log(`cancelled: ${cancelled()}`);
    return text(200, 'done');
  }
  return text(200, `fixture ${event.requestContext.http.method} ${path}`);
};
