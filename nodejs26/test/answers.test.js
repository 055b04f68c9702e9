// What the runtime sends for answers HTTP cannot carry as the function made them, on
// every contract: a head node:http refuses (a control character, a name that is no
// token, a status it does not know) is the runtime's 500, counted and logged; a final
// 1xx is the function's error (RFC 9110 section 15.2); 204 and 304 carry no content
// fields (section 8.6); the framing fields are the runtime's (RFC 9112 section 6);
// Expect: 100-continue past the body limit is answered 413 without the 100.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { functions, startRuntime } from './helpers.js';

/**
 * One raw exchange that does not wait forever: what came back within `ms` (or until the server closed),
 * and whether it closed. A runtime that never answers gives '' here, not a hung test.
 */
function exchange(port, text, ms = 3000) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(text));
    let data = '';
    const done = (closed) => { clearTimeout(timer); socket.destroy(); resolve({ raw: data, closed }); };
    const timer = setTimeout(() => done(false), ms);
    socket.setEncoding('latin1');
    socket.on('data', (chunk) => { data += chunk; });
    socket.on('end', () => done(true));
    socket.on('error', reject);
  });
}

const get = (port, path, extra = '') => exchange(port, `GET ${path} HTTP/1.1\r\nHost: x\r\n${extra}Connection: close\r\n\r\n`);

/** {status, headers (lower-case names, repeated ones joined), body} of the first answer in `raw`. */
function parse(raw) {
  const end = raw.indexOf('\r\n\r\n');
  assert.ok(end > 0, `no answer: ${JSON.stringify(raw)}`);
  const [line, ...fields] = raw.slice(0, end).split('\r\n');
  const headers = {};
  for (const field of fields) {
    const at = field.indexOf(':');
    const name = field.slice(0, at).toLowerCase();
    const value = field.slice(at + 1).trim();
    headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
  }
  return { status: Number(line.split(' ')[1]), line, headers, body: raw.slice(end + 4) };
}

/** The runtime's usual 500: its fixed body, nothing of the function's head. */
function assertInternalError(raw, what) {
  const answer = parse(raw);
  assert.equal(answer.line, 'HTTP/1.1 500 Internal Server Error', `${what}: ${JSON.stringify(raw)}`);
  assert.equal(answer.body, 'Internal Server Error', what);
  assert.equal(answer.headers['x-a'], undefined, what);
  assert.equal(answer.headers['content-length'], '21', what);
  assert.equal((raw.match(/HTTP\/1\.1 /g) ?? []).length, 1, `${what}: one answer`);
  return answer;
}

const record = (runtime, id, pattern) => runtime.waitFor((r) => r.records().find((x) => x.request_id === id && pattern.test(x.message)), `a log record matching ${pattern} for ${id}`);

describe('main(req, res): heads node:http refuses', () => {
  let runtime;
  before(async () => {
    runtime = await startRuntime({ HANDLER_FOLDER: functions('heads'), SERVER_CALL_TIMEOUT: '2', SERVER_MAX_INFLIGHT: '2', SERVER_ACCESS_LOG: 'true' });
  });
  after(() => runtime?.stop());

  // (A name that is no token, or a value past Latin-1, res's Headers refuse when the function sets it: its usual 500.)
  for (const path of ['/ctl', '/ctl-send', '/ctl-write', '/ctl-stream']) {
    test(`${path}: the runtime's 500 at once, one log line naming what was refused`, async () => {
      const id = `refused${path.replaceAll('/', '-')}`;
      const { raw, closed } = await get(runtime.port, path, `X-Request-Id: ${id}\r\n`);
      assert.ok(closed, `the answer ended: ${JSON.stringify(raw)}`);
      assertInternalError(raw, path);
      const line = await record(runtime, id, /with a head node:http cannot send/);
      assert.equal(line.level, 'ERROR');
      assert.equal(line.message, `Function answered GET ${path} with a head node:http cannot send (Invalid character in header content ["x-a"]); answered 500 instead`);
      assert.equal(line.exc_info, undefined, 'no stack: the reason is all there is');
      await runtime.waitFor((r) => r.records().find((x) => x.logger === 'funcwsgi.access' && x.request_id === id && x.status === 500), 'the access log line');
      await new Promise((resolve) => setTimeout(resolve, 50));
      assert.deepEqual(runtime.records().filter((x) => x.request_id === id && x.logger !== 'funcwsgi.access').length, 1, 'one line');
    });
  }

  test('refused heads release their admission slot, and the connection goes on serving', async () => {
    // SERVER_MAX_INFLIGHT=2: calls that kept their slot would make every later call a 503.
    for (let i = 0; i < 4; i += 1) assertInternalError((await get(runtime.port, '/ctl')).raw, `call ${i}`);
    const both = await exchange(runtime.port, 'GET /ctl HTTP/1.1\r\nHost: x\r\n\r\nGET /ok HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    assert.match(both.raw, /^HTTP\/1\.1 500 [\s\S]*\r\n\r\nInternal Server ErrorHTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\nok$/);
  });

  test('counted as failed calls in the metrics', async () => {
    const { raw } = await get(runtime.port, '/metrics');
    const failures = Number(/^function_failures_total\{method="GET"\} (\d+)$/m.exec(raw)?.[1]);
    assert.ok(failures >= 9, raw);
  });

  test('a Latin-1 value goes as Latin-1 bytes, as HTTP has it', async () => {
    const { raw } = await get(runtime.port, '/latin1');
    assert.match(raw, /\r\nx-a: \xfc\r\n/);
  });

  test("redirect() percent-encodes the Location as Express's encodeurl does", async () => {
    const answer = parse((await get(runtime.port, '/redirect')).raw);
    assert.equal(answer.status, 302);
    assert.equal(answer.headers.location, '/caf%C3%A9%20%41%25zz');
  });
});

describe('main(req, res): interim and bodiless statuses', () => {
  let runtime;
  before(async () => {
    runtime = await startRuntime({ HANDLER_FOLDER: functions('heads'), SERVER_CALL_TIMEOUT: '2' });
  });
  after(() => runtime?.stop());

  for (const code of [100, 101, 103]) {
    test(`a final ${code} is the function's error: 500, and one line saying so`, async () => {
      const id = `interim-${code}`;
      const { raw } = await get(runtime.port, `/interim?code=${code}`, `X-Request-Id: ${id}\r\n`);
      assertInternalError(raw, `final ${code}`);
      const line = await record(runtime, id, /interim/);
      assert.equal(line.message, `Function answered GET /interim with the interim status ${code} as its answer: an answer's status is 200 or more (RFC 9110 section 15.2); answered 500 instead`);
    });
  }

  test('a 103 before a streamed body is the same 500', async () => {
    assertInternalError((await get(runtime.port, '/interim-stream')).raw, 'streamed 103');
  });

  for (const [path, code] of [['/code-204', 204], ['/response-null?code=204', 204], ['/response-null?code=304', 304]]) {
    test(`${path}: ${code} without Content-Length, Content-Type or a body`, async () => {
      const { raw, closed } = await exchange(runtime.port, `GET ${path} HTTP/1.1\r\nHost: x\r\n\r\nGET /ok HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      assert.ok(closed);
      const answer = parse(raw);
      assert.equal(answer.status, code);
      assert.equal(answer.headers['content-length'], undefined, raw);
      assert.equal(answer.headers['content-type'], undefined, raw);
      assert.equal(answer.headers['transfer-encoding'], undefined, raw);
      assert.ok(answer.body.startsWith('HTTP/1.1 200 OK\r\n'), `nothing between the ${code} and the next answer: ${JSON.stringify(raw)}`);
    });
  }

  test("HEAD: a null-bodied Response's own Content-Length is kept (a GET's length)", async () => {
    const { raw } = await exchange(runtime.port, 'HEAD /response-head HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    assert.equal(parse(raw).headers['content-length'], '1234');
    assert.equal(parse((await get(runtime.port, '/response-head')).raw).headers['content-length'], '0');
  });
});

describe('main(req, res): the framing is the runtime', () => {
  let runtime;
  before(async () => {
    runtime = await startRuntime({ HANDLER_FOLDER: functions('heads'), SERVER_CALL_TIMEOUT: '2', SERVER_MAX_BODY_SIZE: '1000' });
  });
  after(() => runtime?.stop());

  for (const value of ['gzip', 'chunked']) {
    test(`Transfer-Encoding: ${value} from the function is dropped; the body goes with its length`, async () => {
      const answer = parse((await get(runtime.port, `/te?value=${value}`)).raw);
      assert.equal(answer.headers['transfer-encoding'], undefined);
      assert.equal(answer.headers['content-length'], '3');
      assert.equal(answer.body, 'abc');
    });
  }

  test("the function's Content-Length never outs the body's own", async () => {
    const answer = parse((await get(runtime.port, '/content-length')).raw);
    assert.equal(answer.headers['content-length'], '3');
    const streamed = await exchange(runtime.port, 'GET /response-length HTTP/1.1\r\nHost: x\r\n\r\nGET /ok HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    assert.ok(streamed.closed, `both answered: ${JSON.stringify(streamed.raw)}`);
    const first = parse(streamed.raw);
    assert.equal(first.headers['content-length'], undefined);
    assert.equal(first.headers['transfer-encoding'], 'chunked');
    assert.match(first.body, /^5\r\nhello\r\n0\r\n\r\nHTTP\/1\.1 200 OK\r\n/);
  });

  test("Connection and Keep-Alive are the runtime's; a function's Connection: close still closes", async () => {
    const kept = await exchange(runtime.port, 'GET /keep-alive HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    assert.ok(kept.closed);
    const answer = parse(kept.raw);
    assert.equal(answer.headers.connection, 'close', "the client's close wins over the function's keep-alive");
    assert.equal(answer.headers['keep-alive'], undefined);
    const closing = await exchange(runtime.port, 'GET /close HTTP/1.1\r\nHost: x\r\n\r\nGET /ok HTTP/1.1\r\nHost: x\r\n\r\n');
    assert.ok(closing.closed);
    assert.equal(parse(closing.raw).headers.connection, 'close');
    assert.equal((closing.raw.match(/HTTP\/1\.1 /g) ?? []).length, 1, 'nothing served after the close');
  });

  test('Expect: 100-continue past SERVER_MAX_BODY_SIZE: 413 at once, no 100 Continue', async () => {
    const { raw, closed } = await exchange(runtime.port, 'POST /ok HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\nExpect: 100-continue\r\n\r\n');
    assert.ok(closed);
    assert.match(raw, /^HTTP\/1\.1 413 Request Entity Too Large\r\n/);
    assert.ok(!raw.includes('100 Continue'), raw);
  });

  test('Expect: 100-continue within the limit: 100 Continue, then the answer', async () => {
    const socket = net.connect(runtime.port, '127.0.0.1');
    let raw = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk) => { raw += chunk; });
    socket.write('POST /ok HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n');
    await runtime.waitFor(() => raw.includes('\r\n\r\n'), 'the 100');
    assert.equal(raw, 'HTTP/1.1 100 Continue\r\n\r\n');
    socket.write('abc');
    await new Promise((resolve) => socket.on('end', resolve));
    assert.match(raw, /^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\nok$/);
  });
});

describe('the platform contracts: heads node:http refuses, interim and bodiless statuses, framing', () => {
  const contracts = [
    ['AWS Lambda (payload 2.0)', { _HANDLER: 'index.handler', LAMBDA_TASK_ROOT: functions('heads-lambda') }, {
      refused: ['/crlf', '/bad-name', '/euro'], interim: '/interim', noContent: '/no-content', te: '/te',
    }],
    ['AWS Lambda (payload 1.0)', { _HANDLER: 'index.handler', LAMBDA_TASK_ROOT: functions('heads-lambda'), LAMBDA_PAYLOAD_FORMAT: '1.0' }, {
      refused: ['/crlf', '/bad-name', '/euro'], interim: '/interim', te: '/te',
    }],
    ['Azure Functions', { FUNCTIONS_WORKER_RUNTIME: 'node', AzureWebJobsScriptRoot: functions('heads-azure') }, {
      // (Its library refuses a status outside 200-599 itself, as on Azure: the host's empty 500.)
      refused: ['/api/heads/ctl'], interim: null, noContent: '/api/heads/no-content', te: '/api/heads/te',
    }],
    ['Functions Framework', { HANDLER_FOLDER: functions('heads-gcf'), FUNCTION_TARGET: 'heads' }, {
      refused: ['/ctl'], interim: '/interim', te: '/te',
    }],
    ['Fission', { USERFUNCVOL: functions('heads-fission'), HANDLER_FOLDER: functions('heads-fission'), HANDLER_MODULE_NAME: 'index', HANDLER_FUNCTION_NAME: 'heads' }, {
      refused: ['/ctl', '/ctl-stream', '/status-text', '/status-1000'], interim: '/interim', te: '/te',
    }],
  ];
  for (const [name, env, cases] of contracts) {
    describe(name, () => {
      let runtime;
      before(async () => { runtime = await startRuntime({ SERVER_CALL_TIMEOUT: '2', SERVER_MAX_INFLIGHT: '1', ...env }); });
      after(() => runtime?.stop());

      test('a refused head is the runtime\'s 500, logged, its slot released', async () => {
        for (const path of [...cases.refused, ...cases.refused]) {
          const id = `refused-${Math.random().toString(16).slice(2)}`;
          assertInternalError((await get(runtime.port, path, `X-Request-Id: ${id}\r\n`)).raw, `${name} ${path}`);
          await record(runtime, id, /with a head node:http cannot send/);
        }
      });
      if (cases.interim) {
        test('a final 1xx is a 500', async () => {
          assertInternalError((await get(runtime.port, cases.interim)).raw, `${name} ${cases.interim}`);
        });
      }
      if (cases.noContent) {
        test('204: no Content-Length, Content-Type or body', async () => {
          const { raw } = await get(runtime.port, cases.noContent);
          const answer = parse(raw);
          assert.equal(answer.status, 204);
          assert.deepEqual([answer.headers['content-length'], answer.headers['content-type'], answer.body], [undefined, undefined, ''], raw);
        });
      }
      test("the function's Transfer-Encoding is dropped: the runtime's length", async () => {
        const answer = parse((await get(runtime.port, cases.te)).raw);
        assert.equal(answer.headers['transfer-encoding'], undefined, JSON.stringify(answer));
        assert.equal(answer.headers['content-length'], '3');
        assert.equal(answer.body, 'abc');
      });
    });
  }
});
