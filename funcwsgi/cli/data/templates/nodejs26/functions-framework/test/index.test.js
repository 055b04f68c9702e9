// Tests of the function, without a server, as Google's samples test them (getFunction):
// `npm test` once `npm install` brought the framework, or with nodejs26's stand-in for it:
// `node --import <funcwsgi>/nodejs26/sdk/register.js --test`.
const assert = require('node:assert/strict');
const { test } = require('node:test');
const { getFunction } = require('@google-cloud/functions-framework/testing');

require('../index.js');

function call(req) {
  let sent;
  const res = { json: (value) => { sent = value; return res; }, status: () => res };
  getFunction('helloHttp')({ query: {}, body: undefined, ...req }, res);
  return sent;
}

test('greets the world by default', () => {
  assert.deepEqual(call({}), { message: 'Hello, world!' });
});

test('greets by query name', () => {
  assert.deepEqual(call({ query: { name: 'you' } }), { message: 'Hello, you!' });
});

test('greets by JSON name', () => {
  assert.deepEqual(call({ body: { name: 'JSON' } }), { message: 'Hello, JSON!' });
});
