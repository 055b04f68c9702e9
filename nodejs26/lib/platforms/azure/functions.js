// The module '@azure/functions' (the v4 programming model) for an app that imports it
// without installing it: the same API as the library (Azure/azure-functions-nodejs-library
// at 5a93c7693d78921f08e414d11727c95c5d17e42c, and the sources the npm package 4.16.5
// ships: src/app.ts, src/InvocationModel.ts, src/http/, src/converters/), registering through '@azure/functions-core'
// exactly as the library does, so that the runtime's host serves an app the same way
// whichever of the two it imported. Only HTTP triggers are served; the others register
// and are skipped by the host (docs/migration-azure.md#nodejs).
import { createHash } from 'node:crypto';
import { format } from 'node:util';
import * as core from './core.js';

const RETURN = '$return';
const isTrigger = (type) => Boolean(type) && /trigger$/i.test(type);
const isHttpTrigger = (type) => type?.toLowerCase() === 'httptrigger';

function named(binding, suffix) {
  if (!binding.name) {
    let type = binding.type;
    if (!type.toLowerCase().endsWith(suffix.toLowerCase())) type += suffix;
    binding.name = type + createHash('sha256').update(JSON.stringify(binding)).digest('hex').slice(0, 10);
  }
  return binding;
}

/** The library's other triggers: they register (and are listed as not served at start-up). */
const NON_HTTP_TRIGGERS = {
  timer: 'timerTrigger', storageBlob: 'blobTrigger', storageQueue: 'queueTrigger', serviceBusQueue: 'serviceBusTrigger', serviceBusTopic: 'serviceBusTrigger',
  eventHub: 'eventHubTrigger', eventGrid: 'eventGridTrigger', cosmosDB: 'cosmosDBTrigger', warmup: 'warmupTrigger', sql: 'sqlTrigger', mySql: 'mysqlTrigger',
  webPubSub: 'webPubSubTrigger', connectorTrigger: 'connectorTrigger', mcpTool: 'mcpToolTrigger', mcpResource: 'mcpResourceTrigger', mcpPrompt: 'mcpPromptTrigger',
};

const bindingMaker = (suffix, types) => Object.freeze({
  ...Object.fromEntries(Object.entries(types).map(([fn, type]) => [fn, (options = {}) => named({ ...options, type }, suffix)])),
  generic: (options) => named({ ...options }, suffix),
});

export const trigger = Object.freeze({
  ...bindingMaker('Trigger', NON_HTTP_TRIGGERS),
  http: (options = {}) => named({ ...options, authLevel: options.authLevel || 'anonymous', methods: options.methods || ['GET', 'POST'], type: 'httpTrigger' }, 'Trigger'),
});
export const input = bindingMaker('Input', { storageBlob: 'blob', table: 'table', cosmosDB: 'cosmosDB', sql: 'sql', mySql: 'mysql', webPubSubConnection: 'webPubSubConnection', webPubSubContext: 'webPubSubContext' });
export const output = bindingMaker('Output', { http: 'http', storageBlob: 'blob', table: 'table', storageQueue: 'queue', serviceBusQueue: 'serviceBus', serviceBusTopic: 'serviceBus', eventHub: 'eventHub', eventGrid: 'eventGrid', cosmosDB: 'cosmosDB', sql: 'sql', mySql: 'mysql', webPubSub: 'webPubSub' });

// -- HttpRequest, HttpResponse, InvocationContext --------------------------------------------

const mapping = (nullable, plain) => {
  if (nullable) return Object.fromEntries(Object.entries(nullable).filter(([, value]) => value?.value !== undefined && value?.value !== null).map(([key, value]) => [key, value.value]));
  return { ...(plain ?? {}) };
};

function userOf(headers) {
  const principal = headers.get('x-ms-client-principal');
  if (!principal) return null;
  let claims;
  try {
    claims = JSON.parse(Buffer.from(principal, 'base64').toString('utf8'));
  } catch {
    return null;
  }
  if (claims === null || typeof claims !== 'object' || Array.isArray(claims)) return null;
  if (claims.identityProvider) return { type: 'StaticWebApps', id: claims.userId, username: claims.userDetails, identityProvider: claims.identityProvider, claimsPrincipalData: claims };
  const required = (name) => {
    const value = headers.get(name);
    if (value === null) throw new Error(`${name} is missing`);
    return value;
  };
  return { type: 'AppService', id: required('x-ms-client-principal-id'), username: required('x-ms-client-principal-name'), identityProvider: required('x-ms-client-principal-idp'), claimsPrincipalData: claims };
}

export class HttpRequest {
  #init;
  #request;
  #user;

  /** `init`: the host's RpcHttpData (url, method, headers, query, params, body), as the library takes it. */
  constructor(init) {
    this.#init = init;
    let request = init.nativeRequest;
    if (!request) {
      // A GET or HEAD body is dropped: the fetch Request refuses one (the library logs and drops it too).
      const bodyless = /^(?:get|head)$/i.test(init.method);
      const body = bodyless ? undefined : init.body?.bytes ? Buffer.from(init.body.bytes) : init.body?.string || undefined;
      request = new Request(init.url, { body, method: init.method, headers: mapping(init.nullableHeaders, init.headers) });
    }
    this.#request = request;
    this.query = init.nullableQuery || init.query ? new URLSearchParams(mapping(init.nullableQuery, init.query)) : new URL(request.url).searchParams;
    this.params = mapping(init.nullableParams, init.params);
  }

  get url() { return this.#request.url; }
  get method() { return this.#request.method; }
  get headers() { return this.#request.headers; }
  get body() { return this.#request.body; }
  get bodyUsed() { return this.#request.bodyUsed; }
  /** The caller Azure's authentication (EasyAuth, Static Web Apps) put in x-ms-client-principal, or null (the library's extractHttpUserFromHeaders). */
  get user() {
    if (this.#user === undefined) this.#user = userOf(this.headers);
    return this.#user;
  }

  arrayBuffer() { return this.#request.arrayBuffer(); }
  blob() { return this.#request.blob(); }
  formData() { return this.#request.formData(); }
  json() { return this.#request.json(); }
  text() { return this.#request.text(); }
  clone() { return new HttpRequest({ ...this.#init, nativeRequest: this.#request.clone() }); }
}

const NO_BODY_STATUSES = new Set([204, 205, 304]);

export class HttpResponse {
  #response;

  constructor(init = {}) {
    const options = { status: init.status, headers: init.headers };
    // 204, 205 and 304 carry no body: the fetch Response refuses one, so it is left out (as the library does).
    const bodyless = NO_BODY_STATUSES.has(init.status);
    if (init.nativeResponse) this.#response = init.nativeResponse;
    else if (init.jsonBody !== undefined && init.jsonBody !== null && !bodyless) {
      const headers = new Headers(init.headers);
      if (!headers.has('content-type')) headers.set('content-type', 'application/json');
      this.#response = new Response(JSON.stringify(init.jsonBody), { ...options, headers });
    } else this.#response = new Response(bodyless ? undefined : init.body, options);
    this.cookies = init.cookies ?? [];
    this.enableContentNegotiation = Boolean(init.enableContentNegotiation);
  }

  get status() { return this.#response.status; }
  get headers() { return this.#response.headers; }
  get body() { return this.#response.body; }
  get bodyUsed() { return this.#response.bodyUsed; }
  arrayBuffer() { return this.#response.arrayBuffer(); }
  blob() { return this.#response.blob(); }
  formData() { return this.#response.formData(); }
  json() { return this.#response.json(); }
  text() { return this.#response.text(); }
  clone() { return new HttpResponse({ nativeResponse: this.#response.clone(), cookies: this.cookies, enableContentNegotiation: this.enableContentNegotiation }); }
}

class Bag {
  #values = {};
  get(nameOrBinding) { return this.#values[typeof nameOrBinding === 'string' ? nameOrBinding : nameOrBinding.name]; }
  set(nameOrBinding, value) { this.#values[typeof nameOrBinding === 'string' ? nameOrBinding : nameOrBinding.name] = value; }
}

const consoleLog = (level, ...args) => (level === 'error' ? console.error : level === 'warning' ? console.warn : console.log)(...args);

export class InvocationContext {
  #log;

  constructor(init = {}) {
    this.invocationId = init.invocationId || 'unknown';
    this.functionName = init.functionName || 'unknown';
    this.extraInputs = new Bag();
    this.extraOutputs = new Bag();
    this.retryContext = init.retryContext;
    this.traceContext = init.traceContext;
    this.triggerMetadata = init.triggerMetadata;
    this.options = { trigger: init.options?.trigger || { name: 'unknown', type: 'unknown' }, return: init.options?.return, extraInputs: init.options?.extraInputs || [], extraOutputs: init.options?.extraOutputs || [] };
    this.#log = init.logHandler || consoleLog;
  }

  log(...args) { this.#log('information', ...args); }
  trace(...args) { this.#log('trace', ...args); }
  debug(...args) { this.#log('debug', ...args); }
  info(...args) { this.#log('information', ...args); }
  warn(...args) { this.#log('warning', ...args); }
  error(...args) { this.#log('error', ...args); }
}

// -- hook contexts: views of the worker's own hook data (the library's src/hooks/) --------

const inits = new WeakMap();
const initOf = (context) => inits.get(context);
const readOnly = (name) => () => { throw new Error(`Cannot assign to read only property '${name}'`); };

export class HookContext {
  constructor(init = {}) {
    init.hookData ??= {};
    inits.set(this, init);
  }

  get hookData() { return initOf(this).hookData; }
  set hookData(value) { readOnly('hookData')(value); }
}
export class AppStartContext extends HookContext {}
export class AppTerminateContext extends HookContext {}
export class InvocationHookContext extends HookContext {
  constructor(init = {}) {
    super(init);
    init.inputs ??= [];
    init.invocationContext ??= new InvocationContext();
  }

  get invocationContext() { return initOf(this).invocationContext; }
  set invocationContext(value) { readOnly('invocationContext')(value); }
  get inputs() { return initOf(this).inputs; }
  set inputs(value) { initOf(this).inputs = value; }
}
export class PreInvocationContext extends InvocationHookContext {
  constructor(init = {}) {
    super(init);
    init.functionCallback ??= () => {};
  }

  get functionHandler() { return initOf(this).functionCallback; }
  set functionHandler(value) { initOf(this).functionCallback = value; }
}
export class PostInvocationContext extends InvocationHookContext {
  get result() { return initOf(this).result; }
  set result(value) { initOf(this).result = value; }
  get error() { return initOf(this).error; }
  set error(value) { initOf(this).error = value; }
}
export class LogHookContext extends HookContext {
  get level() { return initOf(this).level; }
  get category() { return initOf(this).category; }
  get message() { return initOf(this).message; }
  get invocationContext() { return initOf(this).invocationContext; }
}

// -- the programming model the worker drives ------------------------------------------------

/** The HTTP output of a function's result (the library's toRpcHttp): RpcHttpData, or what the function left unset. */
async function toRpcHttp(result, streamed = false) {
  if (result === null || result === undefined) return result;
  if (typeof result !== 'object') throw new TypeError('The HTTP response must be an object with optional properties "body", "status", "headers", and "cookies".');
  const response = result instanceof HttpResponse ? result : new HttpResponse(result);
  return {
    http: {
      statusCode: String(response.status),
      headers: Object.fromEntries(response.headers.entries()),
      cookies: response.cookies.map(toRpcCookie),
      enableContentNegotiation: response.enableContentNegotiation,
      body: streamed && response.body ? { stream: response.body } : { bytes: new Uint8Array(await response.arrayBuffer()) },
    },
  };
}

/** A Cookie as the library hands it to the worker (src/converters/toRpcHttpCookie.ts): nullable fields wrapped. */
function toRpcCookie(cookie) {
  const wrap = (value) => (value === undefined || value === null ? undefined : { value });
  const sameSite = { lax: 'lax', strict: 'strict', none: 'explicitNone' }[String(cookie.sameSite ?? '').toLowerCase()] ?? 'none';
  const expires = cookie.expires === undefined ? undefined : typeof cookie.expires === 'number' ? cookie.expires : cookie.expires.getTime();
  return {
    name: String(cookie.name ?? ''), value: String(cookie.value ?? ''), domain: wrap(cookie.domain), path: wrap(cookie.path),
    expires: expires > 0 ? { value: { seconds: Math.round(expires / 1000) } } : undefined,
    secure: wrap(cookie.secure), httpOnly: wrap(cookie.httpOnly), sameSite, maxAge: wrap(cookie.maxAge),
  };
}

const fromTypedData = (data) => {
  if (!data) return undefined;
  if (data.http) return new HttpRequest(data.http);
  if (data.string !== undefined) { try { return JSON.parse(data.string); } catch { return data.string; } }
  if (data.json !== undefined) return JSON.parse(data.json);
  if (data.bytes !== undefined) return Buffer.from(data.bytes);
  return undefined;
};

class InvocationModel {
  #core;
  #done = false;

  constructor(coreContext) { this.#core = coreContext; }

  async getArguments() {
    const core = this.#core;
    const bindings = core.metadata.bindings;
    const context = new InvocationContext({
      invocationId: core.invocationId,
      functionName: core.metadata.name,
      logHandler: (level, ...args) => {
        if (this.#done && core.state !== 'postInvocationHooks') core.log('warning', 'system', `Warning: Unexpected call to 'log' on the context object after function execution has completed. Function name: ${core.metadata.name}. Invocation Id: ${core.invocationId}.`);
        core.log(level, 'user', format(...args));
      },
      traceContext: core.request.traceContext ?? undefined,
      options: optionsOf(bindings),
    });
    const inputs = [];
    for (const binding of core.request.inputData ?? []) {
      const value = fromTypedData(binding.data);
      if (isTrigger(bindings[binding.name]?.type)) inputs.push(value);
      else context.extraInputs.set(binding.name, value);
    }
    return { context, inputs };
  }

  async invokeFunction(context, inputs, handler) {
    try {
      return await handler(...inputs, context);
    } finally {
      this.#done = true;
    }
  }

  async getResponse(context, result) {
    const response = { invocationId: this.#core.invocationId, outputData: [] };
    for (const [name, binding] of Object.entries(this.#core.metadata.bindings)) {
      if (binding.direction !== 'out' || binding.type?.toLowerCase() !== 'http') continue;
      if (name === RETURN) response.returnValue = await toRpcHttp(result, streams);
      else {
        const value = await toRpcHttp(context.extraOutputs.get(name));
        if (value !== undefined && value !== null) response.outputData.push({ name, data: value });
      }
    }
    return response;
  }
}

function optionsOf(bindings) {
  const options = { trigger: undefined, return: undefined, extraInputs: [], extraOutputs: [] };
  for (const [name, binding] of Object.entries(bindings)) {
    if (binding.direction === 'in' && isTrigger(binding.type)) options.trigger = { ...binding, name };
    else if (name === RETURN) options.return = { ...binding, name };
    else (binding.direction === 'in' ? options.extraInputs : options.extraOutputs).push({ ...binding, name });
  }
  return options;
}

class ProgrammingModel {
  name = '@azure/functions';
  version = "4.16.5 (nodejs26's stand-in)";
  getInvocationModel(coreContext) { return new InvocationModel(coreContext); }
  async getCapabilities(capabilities) {
    setupLocked = true;
    return capabilities;
  }
}

// -- app ------------------------------------------------------------------------------------

let modelSet = false;
let setupLocked = false;
let streams = false;

function register(name, options) {
  if (!modelSet) {
    core.setProgrammingModel(new ProgrammingModel());
    modelSet = true;
  }
  const { handler, return: returned, trigger: given, extraInputs, extraOutputs, retry } = options;
  const bindings = {};
  bindings[given.name] = { ...given, direction: 'in', type: isTrigger(given.type) ? given.type : `${given.type}Trigger` };
  for (const binding of extraInputs ?? []) bindings[binding.name] = { ...binding, direction: 'in' };
  if (returned) bindings[RETURN] = { ...returned, direction: 'out' };
  for (const binding of extraOutputs ?? []) bindings[binding.name] = { ...binding, direction: 'out' };
  core.registerFunction({ name, bindings, retryOptions: retry }, handler);
}

function withTrigger(options, makeTrigger) {
  const { handler, return: returned, trigger: given, extraInputs, extraOutputs, retry, ...triggerOptions } = options;
  return { handler, return: returned, retry, extraInputs, extraOutputs, trigger: given ?? makeTrigger(triggerOptions) };
}

const methodOptions = (optionsOrHandler, method) => ({ ...(typeof optionsOrHandler === 'function' ? { handler: optionsOrHandler } : optionsOrHandler), methods: [method] });

function http(name, options) {
  options.return ||= output.http({});
  register(name, withTrigger(options, trigger.http));
}

const nonHttp = (makeTrigger) => (name, options) => register(name, withTrigger(options, makeTrigger));

export const app = Object.freeze({
  http,
  get: (name, options) => http(name, methodOptions(options, 'GET')),
  put: (name, options) => http(name, methodOptions(options, 'PUT')),
  post: (name, options) => http(name, methodOptions(options, 'POST')),
  patch: (name, options) => http(name, methodOptions(options, 'PATCH')),
  deleteRequest: (name, options) => http(name, methodOptions(options, 'DELETE')),
  generic: (name, options) => register(name, options),
  ...Object.fromEntries(Object.keys(NON_HTTP_TRIGGERS).map((kind) => [kind, nonHttp(trigger[kind])])),
  /** enableHttpStream: a response body is sent as it comes instead of whole; setup() only before the app has started. */
  setup(options = {}) {
    if (setupLocked) throw new Error("Setup options can't be changed after app startup has finished.");
    if (options.enableHttpStream !== undefined && options.enableHttpStream !== null) streams = Boolean(options.enableHttpStream);
  },
  hook: Object.freeze({
    appStart: (handler) => core.registerHook('appStart', (init) => handler(new AppStartContext(init))),
    appTerminate: (handler) => core.registerHook('appTerminate', (init) => handler(new AppTerminateContext(init))),
    preInvocation: (handler) => core.registerHook('preInvocation', (init) => handler(new PreInvocationContext(init))),
    postInvocation: (handler) => core.registerHook('postInvocation', (init) => handler(new PostInvocationContext(init))),
    log: (handler) => core.registerHook('log', (init) => handler(new LogHookContext(init))),
  }),
});

export { Disposable } from './core.js';
export const SqlChangeOperation = Object.freeze({ Insert: 0, Update: 1, Delete: 2, 0: 'Insert', 1: 'Update', 2: 'Delete' });
export const MySqlChangeOperation = Object.freeze({ Update: 0, 0: 'Update' });
export const CosmosDBChangeFeedMode = Object.freeze({ LatestVersion: 'LatestVersion', AllVersionsAndDeletes: 'AllVersionsAndDeletes' });
export { CosmosDBChangeFeedMode as CosmosDBv4ChangeFeedMode };
