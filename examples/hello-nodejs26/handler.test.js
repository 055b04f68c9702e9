// The function's own unit test, without a server: the runtime's resolve hook makes
// `import ... from 'sdk'` work (docs/nodejs26.md):
//   .tools/node/node_modules/.bin/node --import ./nodejs26/sdk/register.js --test examples/hello-nodejs26/
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { main } from './handler.js';

test('greets by name, and says so in a header', () => {
  const headers = {};
  const res = { setHeader: (name, value) => { headers[name] = value; } };
  assert.equal(main({ query: { name: 'Ada' } }, res), 'Hello, Ada!');
  assert.deepEqual(headers, { 'X-Greeting': 'yes' });
});

test('greets the world without a name', () => {
  assert.equal(main({ query: {} }, { setHeader() {} }), 'Hello, world!');
});
