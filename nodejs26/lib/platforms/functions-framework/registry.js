// The functions registered with the runtime's stand-in for '@google-cloud/functions-framework'
// (./framework.js), kept apart from the module's own API as the framework keeps its
// src/function_registry.ts: the loader (./host.js) and ./testing.js read them back.
const registered = new Map();

/** As the framework checks a name: letters, digits, '-' and '_', a letter first, at most 63 characters. */
export const isValidFunctionName = (name) => /^[A-Za-z](?:[-_A-Za-z0-9]{0,61}[A-Za-z0-9])?$/.test(name);

export function register(name, signatureType, userFunction) {
  if (!isValidFunctionName(name)) throw new Error(`Invalid function name: ${name}`);
  registered.set(name, { signatureType, userFunction });
}

/** { signatureType, userFunction } registered under `name`, or undefined (the framework's getRegisteredFunction). */
export const getRegisteredFunction = (name) => registered.get(name);
