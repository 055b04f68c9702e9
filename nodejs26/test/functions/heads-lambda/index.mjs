// A Lambda handler answering what an HTTP front cannot send as it is (test/answers.test.js).
export const handler = async (event) => {
  switch (event.rawPath ?? event.path) {
    case '/crlf': return { statusCode: 200, headers: { 'X-A': 'a\r\nB: c' }, body: 'x' };
    case '/bad-name': return { statusCode: 200, headers: { 'bad name': 'v' }, body: 'x' };
    case '/euro': return { statusCode: 200, headers: { 'X-A': '\u20ac' }, body: 'x' };
    case '/interim': return { statusCode: 101, body: 'x' };
    case '/no-content': return { statusCode: 204, headers: { 'Content-Type': 'text/plain', 'Content-Length': '1' }, body: 'x' };
    case '/te': return { statusCode: 200, headers: { 'Transfer-Encoding': 'chunked', 'Content-Length': '99' }, body: 'abc' };
    default: return { statusCode: 200, body: 'ok' };
  }
};
