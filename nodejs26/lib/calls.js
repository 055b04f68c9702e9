// The call being served, known anywhere below it (sdk.getRequest(), log records)
// through one AsyncLocalStorage: the Node counterpart of funcwsgi/context.py.
import { AsyncLocalStorage } from 'node:async_hooks';

/** @type {AsyncLocalStorage<import('./call.js').Call>} */
export const currentCall = new AsyncLocalStorage();
