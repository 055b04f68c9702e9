// The module '@google-cloud/functions-framework' for a function that imports it without
// installing it: http(name, fn) and cloudEvent(name, fn) register a function by name, as
// the framework's own registry does (GoogleCloudPlatform/functions-framework-nodejs at
// f39924d7790ada5485b1081c2725225941bace7d, src/function_registry.ts, src/index.ts). The
// runtime's loader (./host.js) reads the registration back, from this registry
// (./registry.js) or from the framework's own when the function has it in node_modules.
import { register } from './registry.js';

export const http = (name, handler) => register(name, 'http', handler);
export const cloudEvent = (name, handler) => register(name, 'cloudevent', handler);
