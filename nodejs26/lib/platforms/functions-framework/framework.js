// The module '@google-cloud/functions-framework' for a function that imports it without
// installing it: http(name, fn) and cloudEvent(name, fn) register a function by name, as
// the framework's own registry does (GoogleCloudPlatform/functions-framework-nodejs at
// f39924d7790ada5485b1081c2725225941bace7d, src/function_registry.ts). The runtime's
// loader (./host.js) reads the registration back, from this registry or from the
// framework's own when the function has the framework in its node_modules.
const registered = new Map();

/** As the framework checks a name: letters, digits, '-' and '_', a letter first, at most 63 characters. */
export const isValidFunctionName = (name) => /^[A-Za-z](?:[-_A-Za-z0-9]{0,61}[A-Za-z0-9])?$/.test(name);

function register(name, signatureType, userFunction) {
  if (!isValidFunctionName(name)) throw new Error(`Invalid function name: ${name}`);
  registered.set(name, { signatureType, userFunction });
}

export const http = (name, handler) => register(name, 'http', handler);
export const cloudEvent = (name, handler) => register(name, 'cloudevent', handler);

/** { signatureType, userFunction } registered under `name`, or undefined (the framework's getRegisteredFunction). */
export const getRegisteredFunction = (name) => registered.get(name);
