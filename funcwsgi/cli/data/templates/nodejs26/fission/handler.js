// A Fission Node.js function: fn(context) returns {status, body, headers}, as in
// Fission's Node.js environment (`fission fn create --env nodejs --code handler.js
// --entrypoint handler.main`). Nothing here imports funcwsgi.
module.exports.main = async function (context) {
  const req = context.request;
  const body = req.body && typeof req.body === 'object' ? req.body : {};
  const name = req.query.name ?? body.name ?? req.get('x-fission-params-name') ?? 'world';
  return { status: 200, body: { message: `Hello, ${name}!` } };
};
