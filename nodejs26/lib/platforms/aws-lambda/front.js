// The HTTP front of a Lambda function: the event API Gateway or a function URL
// sends, in payload format 2.0 (HTTP APIs, function URLs) or 1.0 (REST APIs),
// and the answer it makes of the handler's result (AWS's "Working with AWS
// Lambda proxy integrations for HTTP APIs" and "Set up Lambda proxy integrations
// in API Gateway"; aws/aws-sam-cli's local emulation, samcli/local/apigw/
// local_apigw_service.py, at the commit docs/migration-aws-lambda-nodejs.md
// names). The same rules and texts as funcwsgi/compat/aws_lambda.py.
import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import { parse as parseQuery } from 'node:querystring';
import { FRAMING_FIELDS, framingField } from '../../call.js';
import { getLogger } from '../../logs.js';
import { matchRoute } from './template.js';
import { runtimeVersion } from './versions.js';

const log = getLogger('funcwsgi.aws_lambda');
const JSON_TYPE = 'application/json';
/** What API Gateway answers itself, word for word (HTTP APIs and REST APIs differ). */
export const FAILED_V2 = { status: 500, body: '{"message":"Internal Server Error"}' };
export const FAILED_V1 = { status: 502, body: '{"message": "Internal server error"}' };
export const NOT_FOUND_V2 = { status: 404, body: '{"message":"Not Found"}' };
export const NOT_FOUND_V1 = { status: 403, body: '{"message":"Missing Authentication Token"}' };
export const ACCOUNT = '123456789012';
/** Lambda's own limit when no call timeout is set. */
const LAMBDA_MAX_SECONDS = 900;
/** Content types HTTP APIs and function URLs pass as text; any other body arrives base64-encoded. */
const TEXTUAL = /^(text\/.*|application\/(json|javascript|xml|yaml|x-www-form-urlencoded|[\w.+-]*\+(json|xml)))(;.*)?$/i;
const BODILESS = new Set([204, 304]);

/** A result API Gateway cannot make a response of (it answers 502). */
export class MalformedResponse extends Error {}

/** Everything the calls share, worked out once at start-up. */
export function frontSettings(config, template, loadedName) {
  const name = config.awsLambdaFunctionName || config.funcName || loadedName;
  const version = config.awsLambdaFunctionVersion;
  const day = new Date().toISOString().slice(0, 10).replaceAll('-', '/');
  return Object.freeze({
    payloadFormat: config.lambdaPayloadFormat ?? template.payloadFormat ?? '2.0',
    routes: template.routes,
    binaryMediaTypes: template.binaryMediaTypes,
    timeoutMs: (config.serverCallTimeout || LAMBDA_MAX_SECONDS) * 1000,
    functionName: name,
    functionVersion: version,
    arn: `arn:aws:lambda:${config.awsRegion}:${ACCOUNT}:function:${name}`,
    memory: String(template.memorySize ?? config.awsLambdaFunctionMemorySize),
    logGroup: config.awsLambdaLogGroupName ?? `/aws/lambda/${name}`,
    logStream: config.awsLambdaLogStreamName ?? `${day}/[${version}]${randomUUID().replaceAll('-', '')}`,
  });
}

/** The request's headers as [name as sent, value] pairs; over HTTP/2, :authority is the Host the gateway passes on. */
function headerPairs(incoming) {
  const raw = incoming.rawHeaders;
  const pairs = [];
  let authority = null;
  let host = false;
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i] === ':authority') authority = raw[i + 1];
    else if (!raw[i].startsWith(':')) {
      pairs.push([raw[i], raw[i + 1]]);
      if (raw[i].length === 4 && raw[i].toLowerCase() === 'host') host = true;
    }
  }
  if (authority !== null && !host) pairs.unshift(['host', authority]);
  return pairs;
}

function splitTarget(url) {
  const at = url.indexOf('?');
  return at < 0 ? [url, ''] : [url.slice(0, at), url.slice(at + 1)];
}

/** [name, value] pairs of a query string, in order, blanks kept. */
function queryPairs(raw) {
  const pairs = [];
  for (const [name, value] of Object.entries(parseQuery(raw))) for (const one of Array.isArray(value) ? value : [value]) pairs.push([name, one]);
  return pairs;
}

function requestTime(now) {
  const d = new Date(now);
  const month = d.toLocaleString('en-US', { month: 'short', timeZone: 'UTC' });
  const two = (n) => String(n).padStart(2, '0');
  return `${two(d.getUTCDate())}/${month}/${d.getUTCFullYear()}:${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())} +0000`;
}

function isUtf8(data) {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(data);
    return true;
  } catch {
    return false;
  }
}

function encodedBody(data, base64) {
  if (data === null || data.length === 0) return [undefined, false];
  return base64 ? [data.toString('base64'), true] : [data.toString('utf8'), false];
}

/** The payload format 2.0 event: lower-cased headers, repeats comma-joined, cookies apart. */
export function eventV2(call, matched, requestId) {
  const incoming = call.incoming;
  const headers = {};
  const cookies = [];
  for (const [name, value] of headerPairs(incoming)) {
    const lower = name.toLowerCase();
    if (lower === 'cookie') {
      for (const part of value.split(';')) if (part.trim()) cookies.push(part.trim());
      continue;
    }
    headers[lower] = lower in headers ? `${headers[lower]},${value}` : value;
  }
  const [target, rawQuery] = splitTarget(incoming.url);
  const query = {};
  for (const [name, value] of queryPairs(rawQuery)) query[name] = name in query ? `${query[name]},${value}` : value;
  const data = call.data;
  const type = headers['content-type'];
  const [body, encoded] = encodedBody(data, type ? !TEXTUAL.test(type) : data !== null && !isUtf8(data));
  const routeKey = matched ? `${matched.route.method} ${matched.route.path}` : '$default';
  const now = Date.now();
  const host = headers.host ?? 'localhost';
  const event = {
    version: '2.0',
    routeKey,
    rawPath: target,
    rawQueryString: rawQuery,
    headers,
    requestContext: {
      accountId: ACCOUNT,
      apiId: host.split('.')[0],
      domainName: host,
      domainPrefix: host.split('.')[0],
      http: { method: call.method, path: target, protocol: `HTTP/${incoming.httpVersion}`, sourceIp: incoming.socket?.remoteAddress ?? '', userAgent: headers['user-agent'] ?? '' },
      requestId,
      routeKey,
      stage: '$default',
      time: requestTime(now),
      timeEpoch: now,
    },
    isBase64Encoded: encoded,
  };
  if (cookies.length) event.cookies = cookies;
  if (Object.keys(query).length) event.queryStringParameters = query;
  if (matched && Object.keys(matched.parameters).length) event.pathParameters = matched.parameters;
  if (body !== undefined) event.body = body;
  return event;
}

function mediaTypeMatches(pattern, type) {
  if (pattern === '*/*') return true;
  if (pattern.endsWith('/*')) return type.startsWith(pattern.slice(0, -1));
  return pattern.toLowerCase() === type;
}

/** The payload format 1.0 (REST API proxy) event: single- and multi-value headers and query. */
export function eventV1(call, matched, requestId, settings) {
  const incoming = call.incoming;
  const multiHeaders = {};
  for (const [name, value] of headerPairs(incoming)) (multiHeaders[name] ??= []).push(value);
  const [target, rawQuery] = splitTarget(incoming.url);
  const multiQuery = {};
  for (const [name, value] of queryPairs(rawQuery)) (multiQuery[name] ??= []).push(value);
  const type = (incoming.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  const [body, encoded] = encodedBody(call.data, settings.binaryMediaTypes.some((pattern) => mediaTypeMatches(pattern, type)));
  const resource = matched ? matched.route.path : '/{proxy+}';
  const parameters = matched ? matched.parameters : { proxy: target.replace(/^\/+/, '') };
  const now = Date.now();
  const last = (values) => values.at(-1);
  return {
    version: '1.0',
    resource,
    path: target,
    httpMethod: call.method,
    headers: Object.fromEntries(Object.entries(multiHeaders).map(([name, values]) => [name, last(values)])),
    multiValueHeaders: multiHeaders,
    queryStringParameters: Object.keys(multiQuery).length ? Object.fromEntries(Object.entries(multiQuery).map(([name, values]) => [name, last(values)])) : null,
    multiValueQueryStringParameters: Object.keys(multiQuery).length ? multiQuery : null,
    pathParameters: Object.keys(parameters).length ? parameters : null,
    stageVariables: null,
    requestContext: {
      accountId: ACCOUNT,
      apiId: 'funcwsgi',
      resourceId: 'funcwsgi',
      resourcePath: resource,
      httpMethod: call.method,
      path: `/Prod${target}`,
      protocol: `HTTP/${incoming.httpVersion}`,
      stage: 'Prod',
      requestId,
      requestTime: requestTime(now),
      requestTimeEpoch: now,
      identity: { sourceIp: incoming.socket?.remoteAddress ?? '', userAgent: incoming.headers['user-agent'] ?? '' },
      domainName: incoming.headers.host ?? 'localhost',
    },
    body: body ?? null,
    isBase64Encoded: encoded,
  };
}

function statusOf(value) {
  const code = Number(value);
  if (!Number.isInteger(code) || String(value).trim() === '') throw new MalformedResponse(`statusCode ${JSON.stringify(value)} is not an integer`);
  if (code < 100 || code > 599) throw new MalformedResponse(`statusCode ${code} is not an HTTP status`);
  return code;
}

function responseBody(result) {
  const body = result.body;
  if (body === undefined || body === null) return Buffer.alloc(0);
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  if (!result.isBase64Encoded) return Buffer.from(text);
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) throw new MalformedResponse('isBase64Encoded is true but the body is not base64');
  return Buffer.from(text, 'base64');
}

/** The runtime's JSON of the result (JSON.stringify, undefined sent as null); what it cannot marshal fails the call. */
export function resultJson(result) {
  const text = JSON.stringify(result === undefined ? null : result);
  return text === undefined ? 'null' : text;
}

/** {status, headers (flat), body} of a 2.0 result: an object with statusCode is the response; any other value a 200 JSON body. */
export function responseV2(result) {
  if (result === null || typeof result !== 'object' || Array.isArray(result) || !('statusCode' in result)) {
    return { status: 200, headers: ['Content-Type', JSON_TYPE], body: Buffer.from(resultJson(result)) };
  }
  JSON.stringify(result); // what the runtime cannot marshal is a function error, before the gateway sees it
  const headers = [];
  for (const [name, value] of Object.entries(result.headers ?? {})) headers.push(String(name), String(value));
  for (const cookie of result.cookies ?? []) headers.push('Set-Cookie', String(cookie));
  return { status: statusOf(result.statusCode), headers, body: responseBody(result) };
}

/** {status, headers, body} of a 1.0 result: only an object with statusCode is a response; multiValueHeaders join headers. */
export function responseV1(result) {
  if (result === null || typeof result !== 'object' || Array.isArray(result) || !('statusCode' in result)) {
    throw new MalformedResponse(`a ${result === null ? 'null' : Array.isArray(result) ? 'array' : typeof result} without statusCode`);
  }
  JSON.stringify(result);
  const headers = [];
  const multi = result.multiValueHeaders ?? {};
  for (const [name, values] of Object.entries(multi)) for (const value of Array.isArray(values) ? values : [values]) headers.push(String(name), String(value));
  for (const [name, value] of Object.entries(result.headers ?? {})) {
    // Both given: the gateway merges them, a pair present in both once.
    const listed = multi[name];
    if (!(Array.isArray(listed) ? listed : listed === undefined ? [] : [listed]).map(String).includes(String(value))) headers.push(String(name), String(value));
  }
  return { status: statusOf(result.statusCode), headers, body: responseBody(result) };
}

/** The gateway's response on the wire: its default content type, the length counted, no body where HTTP has none. */
function send(call, { status, headers, body }) {
  const flat = [];
  let typed = false;
  for (let i = 0; i < headers.length; i += 2) {
    const lower = headers[i].toLowerCase();
    if (FRAMING_FIELDS.has(lower)) {
      framingField(call, lower, headers[i + 1]); // the runtime frames the answer, as the gateway does
      continue;
    }
    if (lower === 'content-type') typed = true;
    flat.push(headers[i], headers[i + 1]);
  }
  if (BODILESS.has(status)) return void call.answer(status, flat, undefined, STATUS_CODES[status]);
  if (!typed) flat.push('Content-Type', JSON_TYPE);
  flat.push('Content-Length', String(body.length));
  call.answer(status, flat, call.method === 'HEAD' ? undefined : body, STATUS_CODES[status] ?? 'Unknown');
}

function sendFixed(call, reply) {
  send(call, { status: reply.status, headers: ['Content-Type', JSON_TYPE], body: Buffer.from(reply.body) });
}

/** The `context` the runtime gives a handler (context-builder.ts and CallbackContext.js). */
function makeContext(settings, requestId, deadline, done) {
  let waits = true;
  return {
    get callbackWaitsForEmptyEventLoop() { return waits; },
    set callbackWaitsForEmptyEventLoop(value) { waits = value; },
    succeed: (result) => done(null, result),
    fail: (error) => done(error ?? 'handled', null),
    done: (error, result) => done(error, result),
    functionName: settings.functionName,
    functionVersion: settings.functionVersion,
    invokedFunctionArn: settings.arn,
    memoryLimitInMB: settings.memory,
    awsRequestId: requestId,
    logGroupName: settings.logGroup,
    logStreamName: settings.logStream,
    identity: undefined,
    clientContext: undefined,
    tenantId: undefined,
    getRemainingTimeInMillis: () => Math.max(0, Math.round(deadline - Date.now())),
  };
}

const isThenable = (value) => value !== null && (typeof value === 'object' || typeof value === 'function') && typeof value.then === 'function';

/** The per-call function: the event in, the handler called as the runtime calls it, the front's answer out. */
export function makeInvoker(loaded, config, template) {
  const settings = frontSettings(config, template, loaded.name);
  const v2 = settings.payloadFormat === '2.0';
  const failed = v2 ? FAILED_V2 : FAILED_V1;
  const notFound = v2 ? NOT_FOUND_V2 : NOT_FOUND_V1;
  const buildEvent = v2 ? eventV2 : eventV1;
  const toResponse = v2 ? responseV2 : responseV1;
  const fn = loaded.fn;
  const takesCallback = fn.length >= 3;
  const version = runtimeVersion(config.awsExecutionEnv);
  const awaitsReturn = version !== null && version >= 24;
  const where = `${loaded.name}() in ${loaded.path}`;
  return (call) => {
    const [target] = splitTarget(call.incoming.url);
    const matched = matchRoute(settings.routes, call.method, target);
    if (matched === null && settings.routes.length) return void sendFixed(call, notFound);
    const requestId = call.requestId.length === 32 && /^[0-9a-f]+$/.test(call.requestId) ? formatUuid(call.requestId) : call.requestId;
    let finished = false;
    const done = (error, result) => {
      if (finished) return;
      finished = true;
      if (call.answered) return;
      if (error !== undefined && error !== null) return fail(error);
      let response;
      try {
        response = toResponse(result);
      } catch (problem) {
        const what = problem instanceof MalformedResponse ? `returned a response API Gateway refuses: ${problem.message}` : `returned a result the Lambda runtime cannot marshal to JSON: ${problem.message}`;
        log.error(`${where} ${what}`);
        call.failure ??= 'exception';
        return void sendFixed(call, problem instanceof MalformedResponse ? FAILED_V1 : failed);
      }
      if (!call.overdue()) send(call, response);
    };
    const fail = (error) => {
      // Lambda logs the handler's error; the gateway answers with its own fixed text.
      call.failure ??= 'exception';
      log.log(40, [`${where} failed`, error instanceof Error ? error : new Error(String(error))]);
      if (!call.overdue()) sendFixed(call, failed);
    };
    const context = makeContext(settings, requestId, Date.now() + settings.timeoutMs, done);
    let result;
    try {
      result = fn(buildEvent(call, matched, requestId, settings), context, done);
    } catch (error) {
      return done(error);
    }
    if (isThenable(result)) return void result.then((value) => done(null, value), (error) => done(error ?? 'handled'));
    if (takesCallback) return;
    // nodejs24.x's runtime awaits what the handler returned (src/runtime/buffered-invoke-processor.ts).
    // Up to nodejs22.x, a handler that neither returns a promise nor takes the callback gets null sent once
    // the event loop is empty (src/Runtime.js): a server's loop never empties, so null goes at the next turn,
    // unless context.succeed/done answered by then. Without AWS_EXECUTION_ENV, a value returned is used.
    if (awaitsReturn || (result !== undefined && version === null)) return done(null, result);
    setImmediate(() => done(null, null));
  };
}

/** 32 hex digits as the UUID form Lambda's request ids have. */
function formatUuid(hex) {
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
