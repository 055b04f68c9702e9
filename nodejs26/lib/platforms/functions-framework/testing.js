// '@google-cloud/functions-framework/testing' for a function that imports the framework
// without installing it: getFunction(name), as the framework's src/testing.ts gives it.
import { getRegisteredFunction } from './framework.js';

export const getFunction = (name) => getRegisteredFunction(name)?.userFunction;
