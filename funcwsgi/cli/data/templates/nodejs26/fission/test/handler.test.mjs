// Tests of the function with the context Fission's environment gives, without a server: `node --test`.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import handler from '../handler.js';

const context = ({ query = {}, body, headers = {} } = {}) => ({ request: { query, body, get: (name) => headers[name.toLowerCase()] } });

test('greets the world by default', async () => {
  assert.deepEqual(await handler.main(context()), { status: 200, body: { message: 'Hello, world!' } });
});

test('greets by query name', async () => {
  assert.deepEqual((await handler.main(context({ query: { name: 'you' } }))).body, { message: 'Hello, you!' });
});

test('greets by JSON name', async () => {
  assert.deepEqual((await handler.main(context({ body: { name: 'JSON' } }))).body, { message: 'Hello, JSON!' });
});
