// A Fission function package (`functionName: 'index.<export>'`), written as
// Fission's Node.js examples write them: `answers` makes one kind of answer per path.
const { Readable } = require('stream');

module.exports.answers = async (context) => {
  const req = context.request;
  switch (req.path) {
    case '/text': return { status: 200, body: 'plain' };
    case '/typed': return { status: 201, body: 'typed', headers: { 'Content-Type': 'text/plain', 'X-Kind': 'typed' } };
    case '/object': return { status: 200, body: { a: 1, list: [1, 'two'] } };
    case '/number': return { status: 200, body: 42 };
    case '/buffer': return { status: 200, body: Buffer.from('bytes') };
    case '/empty': return { status: 204 };
    case '/json-typed': return { status: 200, body: '{"ok":true}', headers: { 'content-type': 'application/json' } };
    case '/stream': return { status: 200, body: Readable.from(['a', 'b', 'c']), headers: { 'Content-Type': 'text/plain' } };
    case '/fail': throw new Error('the database password is hunter2');
    case '/not-an-object': return 'just a string';
    default: return { status: 200, body: { method: req.method, url: req.url, body: req.body ?? null, query: req.query, param: req.get('x-fission-params-id') ?? null, params: req.params } };
  }
};
module.exports.throwsAtOnce = function (context) { throw new Error('thrown with hunter2'); };
module.exports.callback = function (context, callback) {
  setTimeout(() => callback(200, `called back for ${context.request.query.name ?? 'nobody'}`, { 'X-Callback': 'yes' }), 10);
};
module.exports.noArguments = function () { return { status: 200, body: 'no arguments' }; };
