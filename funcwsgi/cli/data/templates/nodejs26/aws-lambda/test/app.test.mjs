// Tests of the handler with the events an HTTP API sends, without a server: `node --test`.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { lambdaHandler } from '../hello-world/app.mjs';

const event = ({ query, body } = {}) => ({ version: '2.0', rawPath: '/', queryStringParameters: query, body, isBase64Encoded: false, requestContext: { http: { method: body ? 'POST' : 'GET' } } });
const message = async (e) => JSON.parse((await lambdaHandler(e, {})).body).message;

test('greets the world by default', async () => {
  assert.equal(await message(event()), 'Hello, world!');
});

test('greets by query name', async () => {
  assert.equal(await message(event({ query: { name: 'you' } })), 'Hello, you!');
});

test('greets by JSON name', async () => {
  assert.equal(await message(event({ body: '{"name": "JSON"}' })), 'Hello, JSON!');
});
