// '@google-cloud/functions-framework/testing' for a function that imports the framework
// without installing it, as the framework's src/testing.ts gives it: getFunction(name), and
// getTestServer(name), a node:http server (for supertest and the like) that calls the
// function as nodejs26 calls it, with the runtime's defaults.
import http from 'node:http';
import { fromEnv } from '../../config.js';
import { Runtime } from '../../server.js';
import { invokerFor } from './host.js';
import { getRegisteredFunction } from './registry.js';

export const getFunction = (name) => getRegisteredFunction(name)?.userFunction;

export function getTestServer(name) {
  const registered = getRegisteredFunction(name);
  if (!registered) throw new Error(`The provided function "${name}" was not registered. Did you forget to require the module that defined it?`);
  const found = { fn: registered.userFunction, signatureType: registered.signatureType };
  const loaded = { ...found, signature: registered.signatureType, name, path: name, hooks: {}, invoke: invokerFor(found) };
  return http.createServer(new Runtime(fromEnv({}), loaded).handle);
}
