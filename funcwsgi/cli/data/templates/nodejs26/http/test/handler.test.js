// Tests of the function, without a server: `node --test` (or `npm test`) in the function's folder.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { main } from '../handler.js';

const request = ({ query = {}, body } = {}) => ({ method: body ? 'POST' : 'GET', path: '/', query, body, headers: {} });

test('greets the world by default', () => {
  assert.deepEqual(main(request(), {}), { message: 'Hello, world!' });
});

test('greets by query name', () => {
  assert.deepEqual(main(request({ query: { name: 'you' } }), {}), { message: 'Hello, you!' });
});

test('greets by JSON name', () => {
  assert.deepEqual(main(request({ body: { name: 'JSON' } }), {}), { message: 'Hello, JSON!' });
});
