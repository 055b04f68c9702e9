// The module '@azure/functions-core': what the Azure Functions Node.js worker injects for
// the '@azure/functions' library to register through (Azure/azure-functions-nodejs-worker
// at 2876343942423f1b18483d99bcd8461bd5297a9c, src/setupCoreModule.ts and src/coreApi/,
// src/hooks/). The library (or the runtime's stand-in for it, ./functions.js) sets its
// programming model and registers each function with its bindings and handler; the
// runtime's host (./host.js) reads them back and invokes them as the worker does.
import { getLogger } from '../../logs.js';
import { state } from './registrations.js';

export const version = '3.10.1';
/** The Functions host this runtime stands in for (the worker reports the host's version here). */
export const hostVersion = '4.1037.0';

const logger = getLogger('funcwsgi.azure');

export class Disposable {
  static from(...inputs) {
    return new Disposable(() => { for (const input of inputs) input.dispose(); });
  }

  #callOnDispose;

  constructor(callOnDispose) {
    this.#callOnDispose = callOnDispose;
  }

  dispose() {
    const callOnDispose = this.#callOnDispose;
    this.#callOnDispose = undefined;
    return callOnDispose?.();
  }
}

export function setProgrammingModel(model) {
  if (state.programmingModel !== undefined) logger.info(`Setting Node.js programming model to "${model.name}" version "${model.version}"`);
  state.programmingModel = model;
}

export function getProgrammingModel() {
  return state.programmingModel;
}

/** As the worker's registerFunction: during start-up only, one id once. */
export function registerFunction(metadata, callback) {
  if (state.locked) throw new Error('A function can only be registered during app startup.');
  const functionId = metadata.functionId || metadata.name;
  if (state.functions.has(functionId)) throw new Error(`A function with id "${functionId}" has already been registered.`);
  state.functions.set(functionId, { metadata: { ...metadata, functionId, scriptFile: state.entryPoint }, callback });
  return new Disposable(() => {
    if (state.locked) throw new Error('A function can only be disposed during app startup.');
    state.functions.delete(functionId);
  });
}

export function registerHook(hookName, callback) {
  const hooks = state.hooks.get(hookName);
  if (hooks === undefined) throw Object.assign(new RangeError(`Unrecognized hook "${hookName}"`), { isAzureFunctionsSystemError: true });
  hooks.push(callback);
  return new Disposable(() => {
    const at = hooks.indexOf(callback);
    if (at >= 0) hooks.splice(at, 1);
  });
}

const LEVELS = { trace: 10, debug: 10, information: 20, warning: 30, error: 40, critical: 50, none: 0 };

/** coreApi.log(level, category, message): the function's lines (context.log) and the library's own, at the level it names. */
export function log(level, category, message) {
  const value = LEVELS[level] ?? 20;
  if (value > 0) getLogger(category === 'user' ? 'function' : 'funcwsgi.azure').log(value, [message]);
}
