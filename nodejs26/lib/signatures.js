// The calling conventions a function may use, detected once from its parameters
// (funcwsgi/handler/signatures.py's counterpart). HANDLER_SIGNATURE wins over detection.
import { LoadError } from './errors.js';

export const Signature = Object.freeze({
  REQ_RES: 'req-res', // main(req, res): the reworked API, and Kyma nodejs26's Express-style functions
  REQ: 'req', // main(req) -> response
  NONE: 'none', // main(): the request through sdk.getRequest()
  EVENT_CONTEXT: 'event-context', // main(event, context): Kyma nodejs20-24, Kyma <=3.12, Kubeless
});

/** The names of a function's declared parameters, from its source text. */
export function parameterNames(fn) {
  let source = Function.prototype.toString.call(fn);
  source = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/[^\n]*/g, '');
  const arrow = /^\s*(?:async\s+)?([A-Za-z_$][\w$]*)\s*=>/.exec(source);
  if (arrow) return [arrow[1]];
  const open = source.indexOf('(');
  if (open < 0) return [];
  let depth = 0;
  let close = open;
  for (; close < source.length; close += 1) {
    const ch = source[close];
    if (ch === '(' || ch === '[' || ch === '{') depth += 1;
    else if (ch === ')' || ch === ']' || ch === '}') {
      depth -= 1;
      if (depth === 0) break;
    }
  }
  const list = source.slice(open + 1, close);
  const names = [];
  depth = 0;
  let current = '';
  for (const ch of list) {
    if (ch === '(' || ch === '[' || ch === '{') depth += 1;
    if (ch === ')' || ch === ']' || ch === '}') depth -= 1;
    if (ch === ',' && depth === 0) { names.push(current); current = ''; } else current += ch;
  }
  if (current.trim()) names.push(current);
  return names.map((text) => text.trim().split('=')[0].trim()).filter(Boolean);
}

/** The convention `fn` uses; `forced` (HANDLER_SIGNATURE) wins. */
export function detectSignature(fn, forced, where) {
  if (forced) return forced;
  const names = parameterNames(fn);
  const rest = names.some((name) => name.startsWith('...'));
  const declared = names.filter((name) => !name.startsWith('...'));
  // Kyma's nodejs20-24 runtimes always passed (event, context[, callback]); their functions
  // often declare only main(event), so a first parameter named event means that contract.
  if (declared[0] === 'event') return Signature.EVENT_CONTEXT;
  if (declared.length > 2) {
    throw new LoadError(`${where} takes ${declared.length} parameters (${declared.join(', ')}); expected main(req, res), main(req), main() or main(event, context)`);
  }
  const count = rest ? 2 : Math.max(declared.length, Math.min(fn.length, 2));
  if (count === 2) return Signature.REQ_RES;
  if (count === 1) return Signature.REQ;
  return Signature.NONE;
}

// Express's senders, and its setters that only Express-style code calls (status().send()).
const SENDERS = '(?:send|json|jsonp|end|sendStatus|sendFile|redirect|write|render|status|set|header|type|append|location|cookie|attachment|format|vary)';

/**
 * Whether a main(req, res) answers Express-style: its source calls one of Express's
 * senders on its response parameter, or hands that parameter to another function
 * (which may answer later). For such a function a synchronous return of nothing is
 * not its answer; the runtime waits for res (as Express does), up to the call timeout.
 */
export function answersThroughRes(fn) {
  const [, res] = parameterNames(fn);
  if (!res || !/^[A-Za-z_$][\w$]*$/.test(res)) return false;
  const source = Function.prototype.toString.call(fn);
  const body = source.slice(source.indexOf(res) + res.length);
  return new RegExp(`\\b${res.replace(/\$/g, '\\$')}\\s*\\.\\s*${SENDERS}\\s*\\(`).test(body) || new RegExp(`[(,]\\s*${res.replace(/\$/g, '\\$')}\\s*[,)]`).test(body);
}
