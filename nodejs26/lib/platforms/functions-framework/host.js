// A function written for Google's Functions Framework for Node.js, loaded and called as
// the framework does (GoogleCloudPlatform/functions-framework-nodejs at
// f39924d7790ada5485b1081c2725225941bace7d): the module is the source folder's
// package.json `main`, else its index.js, else function.js (src/loader.ts,
// getFunctionModulePath); the target is what http(name, fn) or cloudEvent(name, fn)
// registered under FUNCTION_TARGET, through the framework in node_modules or the
// runtime's stand-in (./framework.js), else the module's export of that name (a dotted
// path walks nested exports). The signature is what was registered, else
// FUNCTION_SIGNATURE_TYPE, else http. Calls as src/function_wrappers.ts and
// src/invoker.ts make them, the errors answered as in production (src/logger.ts).
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { LoadError, pyRepr } from '../../errors.js';
import { exported, importModule } from '../../loader.js';
import { HttpError } from '../../request.js';
import { FunctionResponse } from '../../response.js';
import { getRegisteredFunction } from './registry.js';

export const PACKAGE = '@google-cloud/functions-framework';
const NOT_FOUND = Buffer.from('Not Found');

/** The function's module as the framework finds it in `folder` (require.resolve of the folder, then function.js). */
export function modulePath(folder) {
  const require = createRequire(path.join(folder, 'noop.js'));
  for (const candidate of [folder, path.join(folder, 'function.js')]) {
    try {
      return require.resolve(candidate);
    } catch {
      // not this one
    }
  }
  const main = readMain(folder);
  throw new LoadError(`no Functions Framework module in ${folder}: ${main ? `package.json "main" ${pyRepr(main)} names no file` : 'expected package.json "main", index.js or function.js'}`);
}

function readMain(folder) {
  try {
    return JSON.parse(fs.readFileSync(path.join(folder, 'package.json'), 'utf8')).main;
  } catch {
    return undefined;
  }
}

/** What the framework in the function's own node_modules registered under `target`, if it is installed. */
function registeredByLibrary(file, target) {
  const require = createRequire(file);
  let entry;
  try {
    entry = require.resolve(PACKAGE);
  } catch {
    return undefined;
  }
  // The framework's loader asks its registry module, which its index re-exports http() and cloudEvent() from.
  const registry = path.join(path.dirname(entry), 'function_registry.js');
  if (!fs.existsSync(registry)) return undefined;
  const found = require(registry).getRegisteredFunction?.(target);
  return found && { ...found, by: path.dirname(path.dirname(path.dirname(entry))) };
}

/**
 * Loads `target` from `file` (the framework's module of `folder` unless given):
 * { fn, signatureType, path, module, registeredBy (the framework that registered it, null for an export) }. `configured` is FUNCTION_SIGNATURE_TYPE (null: http).
 */
export async function loadTarget(folder, target, configured, file = modulePath(folder)) {
  const module = await importModule(file);
  const standIn = getRegisteredFunction(target);
  const registered = standIn ? { ...standIn, by: "nodejs26's stand-in" } : registeredByLibrary(file, target);
  if (registered) return { fn: registered.userFunction, signatureType: registered.signatureType, path: file, module, registeredBy: `${PACKAGE} (${registered.by})` };
  let value = exported(module);
  for (const part of target.split('.')) value = value === undefined || value === null ? undefined : value[part];
  if (value === undefined) {
    const found = Object.entries(exported(module)).filter(([, item]) => typeof item === 'function').map(([name]) => name).sort();
    throw new LoadError(`no function ${pyRepr(target)} in ${file}, neither registered with ${PACKAGE}'s http() or cloudEvent() nor exported; found: ${found.length ? found.join(', ') : 'no functions'}`);
  }
  if (typeof value !== 'function') throw new LoadError(`${pyRepr(target)} in ${file} is a ${value === null ? 'null' : typeof value}, not a function`);
  return { fn: value, signatureType: configured || 'http', path: file, module, registeredBy: null };
}

/** The framework's answer to a throw or rejection in production: a plain 500, X-Google-Status naming the kind. */
function crash(call, error, status) {
  if (!(error instanceof HttpError) && !call.answered) call.extraHeaders = [...(call.extraHeaders ?? []), 'X-Google-Status', status];
  call.fail(error);
}

/** (call) => void for an HTTP function: fn(req, res), answered through res only, as Express answers. */
export function httpInvoker(fn) {
  return (call) => {
    const res = new FunctionResponse(call);
    call.res = res;
    let result;
    try {
      result = fn(call.req, res);
    } catch (error) {
      return crash(call, error, 'crash');
    }
    if (result !== null && typeof result?.then === 'function') result.then(undefined, (error) => crash(call, error, 'crash'));
  };
}

/** The CloudEvent the framework gives a function: ce-* headers and the parsed body (binary), or the body (structured). */
export function eventOf(req) {
  let event = req.body;
  if (req.get('ce-type') && req.get('ce-specversion') && req.get('ce-source') && req.get('ce-id')) {
    event = {};
    for (const name of Object.keys(req.headers)) if (name.startsWith('ce-')) event[name.slice(3)] = req.get(name);
    event.data = req.body;
  }
  if (req.get('traceparent') && event !== null && typeof event === 'object') event.traceparent = req.get('traceparent');
  return event;
}

/** (call) => void for a CloudEvent function: POST only; its result sent as src/invoker.ts's sendResponse sends it. */
export function cloudEventInvoker(fn) {
  const withCallback = fn.length === 2;
  return (call) => {
    if (call.method !== 'POST') return void call.answer(404, ['Content-Type', 'text/plain; charset=utf-8', 'Content-Length', String(NOT_FOUND.length)], NOT_FOUND);
    const res = new FunctionResponse(call);
    call.res = res;
    new Promise((resolve, reject) => {
      const event = eventOf(call.req);
      if (withCallback) fn(event, (error, result) => (error ? reject(error) : resolve(result)));
      else resolve(fn(event));
    }).then((result) => {
      if (call.answered) return;
      if (result === undefined || result === null) res.sendStatus(204);
      else if (typeof result === 'number') res.json(result);
      else res.send(result);
    }, (error) => crash(call, error, 'error'));
  };
}

export const invokerFor = (loaded) => (loaded.signatureType === 'cloudevent' ? cloudEventInvoker(loaded.fn) : httpInvoker(loaded.fn));
