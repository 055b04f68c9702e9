// Tests of the function, without a server: `npm test` once `npm install` brought
// @azure/functions, or with nodejs26's stand-in for it:
// `node --import <funcwsgi>/nodejs26/sdk/register.js --test`.
const assert = require('node:assert/strict');
const { test } = require('node:test');
const { HttpRequest, InvocationContext } = require('@azure/functions');

const { hello } = require('../src/functions/hello.js');

const call = async (init) => (await hello(new HttpRequest({ method: 'GET', url: 'http://localhost/api/hello', ...init }), new InvocationContext())).jsonBody;

test('greets the world by default', async () => {
    assert.deepEqual(await call({}), { message: 'Hello, world!' });
});

test('greets by query name', async () => {
    assert.deepEqual(await call({ query: { name: 'you' } }), { message: 'Hello, you!' });
});

test('greets by JSON name', async () => {
    assert.deepEqual(await call({ method: 'POST', body: { string: '{"name": "JSON"}' } }), { message: 'Hello, JSON!' });
});
