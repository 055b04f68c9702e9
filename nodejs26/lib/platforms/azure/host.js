// An Azure Functions Node.js app (v4 programming model) served as the Functions host and
// its Node worker serve it. Start-up as the worker's startApp (Azure/azure-functions-
// nodejs-worker at 2876343942423f1b18483d99bcd8461bd5297a9c, src/startApp.ts): every file
// package.json's `main` (a glob) matches is loaded, and what those files register through
// '@azure/functions-core' (./core.js) is the app, whichever '@azure/functions' they import,
// the library in node_modules or the runtime's stand-in (./functions.js). Each call as the
// worker's InvocationHandler drives the programming model: getArguments, the preInvocation
// hooks, invokeFunction, the postInvocation hooks, getResponse; and the HTTP output it
// returns is written as the host writes it. Routes are the host's (./routes.js).
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { FRAMING_FIELDS, framingField } from '../../call.js';
import { LoadError, pyRepr } from '../../errors.js';
import { importModule } from '../../loader.js';
import { getLogger, write } from '../../logs.js';
import { HttpError } from '../../request.js';
import { ALL_METHODS, byPrecedence, compileRoute, matchRoute, routePrefix } from './routes.js';
import { log as coreLog } from './core.js';
import { registrations } from './registrations.js';

const log = getLogger('funcwsgi.azure');
const EMPTY = Buffer.alloc(0);
const SAME_SITE = { lax: 'lax', strict: 'strict', explicitNone: 'none' };

/** package.json's `main` of the app folder, or a LoadError saying what the worker needs. */
function entryPattern(root) {
  const file = path.join(root, 'package.json');
  let main;
  try {
    main = JSON.parse(fs.readFileSync(file, 'utf8')).main;
  } catch (error) {
    throw new LoadError(error.code === 'ENOENT' ? `no package.json in ${root}: an Azure Functions Node.js app names its function files in package.json "main" (such as "src/functions/*.js")` : `${file} cannot be read as JSON: ${error.message}`);
  }
  if (typeof main !== 'string' || !main) throw new LoadError(`${file} has no "main": an Azure Functions Node.js app names its function files there (such as "src/functions/*.js")`);
  return main;
}

/** Loads the app in `root`: { routes, path, name, skipped, start(), stop(), invoke(call) }. */
export async function loadApp(root) {
  const pattern = entryPattern(root);
  const files = fs.globSync(pattern, { cwd: root, exclude: (name) => name === 'node_modules' }).filter((file) => fs.statSync(path.join(root, file)).isFile()).sort();
  if (files.length === 0) throw new LoadError(`package.json "main" ${pyRepr(pattern)} in ${root} matches no file`);
  for (const file of files) {
    const absolute = path.join(root, file);
    await registrations.during(absolute, () => importModule(absolute));
  }
  registrations.lock();
  const model = registrations.model();
  if (model === undefined) throw new LoadError(`${files.map((file) => path.join(root, file)).join(', ')} registered no function: expected app.http('name', { handler }) (or app.get, app.post, ...) from '@azure/functions'`);
  // As the worker asks at its init: the library's HTTP stream proxy, when app.setup() enabled streams.
  const proxy = (await model.getCapabilities({}))?.HttpUri ?? null;
  const prefix = routePrefix(root);
  const routes = [];
  const skipped = [];
  for (const { metadata, callback } of registrations.functions()) {
    const trigger = Object.values(metadata.bindings).find((binding) => binding.direction === 'in' && /trigger$/i.test(binding.type ?? ''));
    if (trigger?.type?.toLowerCase() !== 'httptrigger') {
      skipped.push(`${metadata.name} (${trigger?.type ?? 'no trigger'})`);
      continue;
    }
    const template = trigger.route || metadata.name;
    const { pattern: regex, precedence } = compileRoute(prefix, template);
    const methods = new Set((trigger.methods?.length ? trigger.methods : ALL_METHODS).map((method) => String(method).toUpperCase()));
    routes.push({ name: metadata.name, template, pattern: regex, precedence, methods, metadata, callback, trigger: trigger.name });
  }
  if (routes.length === 0) throw new LoadError(`no HTTP-triggered function in ${root}${skipped.length ? ` (only ${skipped.join(', ')})` : ''}; expected app.http('name', { handler })`);
  routes.sort(byPrecedence);
  if (skipped.length) log.warning(`Not served (nodejs26 serves HTTP triggers only): ${skipped.join(', ')}`);
  log.info(`Azure Functions app: ${routes.map((route) => `${route.name} (${[...route.methods].join(',')} /${[prefix, route.template].filter(Boolean).join('/')})`).join(', ')}; registered through ${model.name} ${model.version}${proxy ? ', HTTP streams on' : ''}`);
  const appHookData = {};
  return {
    routes,
    path: path.join(root, files[0]),
    name: routes.map((route) => route.name).join(', '),
    prefix,
    start: () => registrations.run('appStart', { hookData: {}, appHookData, functionAppDirectory: root }),
    stop: () => registrations.run('appTerminate', { hookData: {}, appHookData }),
    invoke: (call) => serve(routes, appHookData, proxy, call),
  };
}

/** The first route (in precedence order) matching the call's path and method, with its parameters. */
export function findRoute(routes, pathname, method) {
  for (const route of routes) {
    let params;
    try {
      params = matchRoute(route, pathname);
    } catch {
      throw new HttpError(400, 'Bad Request', 'The request path is not valid percent-encoding.');
    }
    if (params !== null && route.methods.has(method)) return { route, params };
  }
  return null;
}

function serve(routes, appHookData, proxy, call) {
  let found;
  try {
    found = findRoute(routes, call.path, call.method);
  } catch (error) {
    return call.fail(error);
  }
  // The host's answer for a path no function's route matches: 404, no body.
  if (found === null) return void call.answer(404, ['Content-Length', '0'], EMPTY);
  const invocationId = randomUUID();
  const invocation = invoke(found.route, found.params, appHookData, call, invocationId, proxy !== null);
  if (proxy === null) return void invocation.then(({ response }) => answer(call, response?.returnValue), (error) => failed(call, error));
  const forwarded = forward(call, proxy, invocationId);
  invocation.then(({ result }) => {
    // Nothing returned: nothing goes to the proxy; the host's empty 200.
    if (result !== undefined && result !== null) return;
    forwarded.destroy();
    answer(call, undefined);
  }, (error) => {
    forwarded.destroy();
    failed(call, error);
  });
}

/**
 * With HTTP streams on, the host sends the request itself to the library's proxy (the library's
 * src/http/httpProxy.ts) and streams the proxy's answer to the caller; the invocation is paired with
 * it by x-ms-invocation-id.
 */
function forward(call, proxy, invocationId) {
  const incoming = call.incoming;
  const headers = { ...incoming.headers, 'x-ms-invocation-id': invocationId, 'x-forwarded-host': incoming.headers.host ?? 'localhost', 'x-forwarded-proto': 'http' };
  if (call.data !== null) headers['content-length'] = String(call.data.length);
  delete headers['transfer-encoding'];
  const request = http.request(new URL(incoming.url, proxy), { method: call.method, headers }, (response) => {
    if (call.answered || call.overdue()) return void response.resume();
    const flat = [];
    for (let i = 0; i < response.rawHeaders.length; i += 2) {
      const name = response.rawHeaders[i];
      if (!HOP_BY_HOP.has(name.toLowerCase())) flat.push(name, response.rawHeaders[i + 1]);
    }
    call.streamWith(response.statusCode, flat, response);
  });
  request.on('error', (error) => { if (!call.answered) failed(call, error); });
  request.end(call.data ?? undefined);
  return request;
}

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'x-ms-invocation-id']);

/** The request as the host hands it to the worker (RpcHttpData). */
export function rpcHttp(call, params) {
  const incoming = call.incoming;
  const headers = {};
  for (const [name, value] of Object.entries(incoming.headers)) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  const query = {};
  // The host hands the query over as one string per name: repeated values joined by commas.
  for (const [name, value] of new URLSearchParams(call.req.queryString)) query[name] = name in query ? `${query[name]},${value}` : value;
  const http = { method: call.method, url: `${incoming.socket?.encrypted ? 'https' : 'http'}://${headers.host ?? 'localhost'}${incoming.url}`, headers, query, params };
  if (call.data !== null && call.data.length > 0 && call.method !== 'GET' && call.method !== 'HEAD') http.body = { bytes: call.data };
  return http;
}

async function invoke(route, params, appHookData, call, invocationId, streamed) {
  const headers = call.incoming.headers;
  const request = {
    invocationId,
    functionId: route.metadata.functionId,
    inputData: [{ name: route.trigger, data: { http: rpcHttp(call, params) } }],
    // With HTTP streams the library reads the headers and route parameters from here (src/http/HttpRequest.ts).
    triggerMetadata: streamed ? triggerMetadata(call, params) : {},
    traceContext: { traceParent: headers.traceparent ?? '', traceState: headers.tracestate ?? '', attributes: {} },
  };
  const core = {
    invocationId,
    request,
    metadata: route.metadata,
    state: undefined,
    log: coreLog,
  };
  const invocation = await registrations.model().getInvocationModel(core);
  const { context, inputs: given } = await invocation.getArguments();
  const hookData = {};
  const pre = { hookData, appHookData, invocationContext: context, functionCallback: route.callback, inputs: given };
  if (registrations.has('preInvocation')) await inState(core, 'preInvocationHooks', () => registrations.run('preInvocation', pre));
  const post = { hookData, appHookData, invocationContext: context, inputs: pre.inputs, result: null, error: null };
  core.state = 'invocation';
  try {
    post.result = await invocation.invokeFunction(context, pre.inputs, pre.functionCallback);
  } catch (error) {
    post.error = error ?? new Error(String(error));
  } finally {
    core.state = undefined;
  }
  if (registrations.has('postInvocation')) await inState(core, 'postInvocationHooks', () => registrations.run('postInvocation', post));
  if (post.error !== null && post.error !== undefined) throw post.error;
  return { response: await invocation.getResponse(context, post.result), result: post.result };
}

function triggerMetadata(call, params) {
  const metadata = { Headers: { json: JSON.stringify(rpcHttp(call, params).headers) } };
  for (const [name, value] of Object.entries(params)) metadata[name] = { string: value };
  return metadata;
}

async function inState(core, state, run) {
  core.state = state;
  try {
    await run();
  } finally {
    core.state = undefined;
  }
}

/** The host's answer to a failed invocation: 500 and no body; why goes to the log. */
function failed(call, error) {
  if (call.answered) return void write('funcwsgi.errors', 40, `Function failed on ${call.method} ${call.path} after it answered`, undefined, error);
  if (error instanceof HttpError) return call.fail(error);
  call.failure ??= 'exception';
  write('funcwsgi.errors', 40, `Function failed on ${call.method} ${call.path}`, undefined, error);
  call.answer(500, ['Content-Length', '0'], EMPTY);
}

/** Writes the function's HTTP output (RpcHttpData) as the host writes it; none set: the host's empty 200. */
export function answer(call, output) {
  if (call.answered || call.overdue()) return;
  const http = output?.http;
  if (http === undefined || http === null) return void call.answer(200, ['Content-Length', '0'], EMPTY);
  const status = Number(http.statusCode ?? 200);
  const flat = [];
  for (const [name, value] of Object.entries(http.headers ?? {})) {
    const lower = name.toLowerCase();
    if (FRAMING_FIELDS.has(lower)) framingField(call, lower, value); // the runtime frames the answer, as the host does
    else flat.push(name, value);
  }
  for (const cookie of http.cookies ?? []) flat.push('Set-Cookie', setCookie(cookie));
  if (http.body?.stream) {
    return void call.streamWith(status, flat, http.body.stream); // the stand-in's answer with HTTP streams on: its body as it comes
  }
  const bytes = http.body?.bytes !== undefined ? Buffer.from(http.body.bytes) : http.body?.string !== undefined ? Buffer.from(http.body.string) : EMPTY;
  flat.push('Content-Length', String(bytes.length));
  call.answer(status, flat, bytes);
}

const unwrap = (value) => (value !== null && typeof value === 'object' && 'value' in value ? value.value : value);

/** An RpcHttpCookie as the host writes it (ASP.NET Core's SetCookieHeaderValue). */
export function setCookie(cookie) {
  const parts = [`${cookie.name}=${cookie.value}`];
  const expires = unwrap(cookie.expires);
  if (expires?.seconds !== undefined) parts.push(`expires=${new Date(Number(expires.seconds) * 1000).toUTCString()}`);
  const maxAge = unwrap(cookie.maxAge);
  if (maxAge !== undefined && maxAge !== null) parts.push(`max-age=${Math.trunc(maxAge)}`);
  const domain = unwrap(cookie.domain);
  if (domain) parts.push(`domain=${domain}`);
  const where = unwrap(cookie.path);
  if (where) parts.push(`path=${where}`);
  if (unwrap(cookie.secure)) parts.push('secure');
  if (SAME_SITE[cookie.sameSite]) parts.push(`samesite=${SAME_SITE[cookie.sameSite]}`);
  if (unwrap(cookie.httpOnly)) parts.push('httponly');
  return parts.join('; ');
}

