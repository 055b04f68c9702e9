// A Fission function whose answers an HTTP front cannot send as they are (test/answers.test.js).
const { Readable } = require('stream');

module.exports.heads = async (context) => {
  switch (context.request.path) {
    case '/ctl': return { status: 200, body: 'x', headers: { 'X-A': 'a\x01b' } };
    case '/ctl-stream': return { status: 200, body: Readable.from(['a']), headers: { 'X-A': 'a\x01b' } };
    case '/status-text': return { status: 'abc', body: 'x' };
    case '/status-1000': return { status: 1000, body: 'x' };
    case '/interim': return { status: 102, body: 'x' };
    case '/te': return { status: 200, body: 'abc', headers: { 'Transfer-Encoding': 'chunked' } };
    default: return { status: 200, body: 'ok' };
  }
};
