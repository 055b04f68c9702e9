// The Azure Functions host's HTTP routes (funcwsgi/compat/azure.py's compile_route, in
// JavaScript): host.json's extensions.http.routePrefix (default 'api') before each
// function's route template, which is ASP.NET Core's: literal segments matched in any
// case, '{name}', constraints '{id:int}', '{name:alpha}', optional '{page?}', catch-all
// '{*rest}'; a function without a route is reached at its name. Precedence as ASP.NET
// routing orders them: literals before constrained parameters before plain ones before
// catch-alls, segment by segment.
import fs from 'node:fs';
import path from 'node:path';
import { LoadError, pyRepr } from '../../errors.js';

export const DEFAULT_ROUTE_PREFIX = 'api';
export const ALL_METHODS = Object.freeze(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'TRACE']);
/** The host's route constraints and what each matches. */
export const CONSTRAINTS = Object.freeze({
  int: '-?\\d+',
  long: '-?\\d+',
  bool: '(?:true|false)',
  alpha: '[A-Za-z]+',
  guid: '[0-9A-Fa-f]{8}-?[0-9A-Fa-f]{4}-?[0-9A-Fa-f]{4}-?[0-9A-Fa-f]{4}-?[0-9A-Fa-f]{12}',
  double: '-?\\d+(?:\\.\\d+)?',
  float: '-?\\d+(?:\\.\\d+)?',
  decimal: '-?\\d+(?:\\.\\d+)?',
  datetime: '[0-9T:.\\-+Z]+',
});
const PARAMETER = /^\{(\*?)([A-Za-z_]\w*)(\??)(?::([a-z]+)(?:\([^)]*\))?)?(\??)(?:=[^}]*)?\}$/;
const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** { pattern, precedence } for `prefix/template` as the host matches it. */
export function compileRoute(prefix, template) {
  const full = [prefix, template].map((part) => part.replace(/^\/+|\/+$/g, '')).filter(Boolean).join('/');
  let pattern = '';
  const precedence = [];
  for (const segment of full ? full.split('/') : []) {
    const found = PARAMETER.exec(segment);
    if (found === null) {
      if (segment.includes('{')) throw new LoadError(`route template ${pyRepr(template)} has a segment nodejs26 cannot match: ${pyRepr(segment)}`);
      pattern += `/${escape(segment)}`;
      precedence.push(0);
      continue;
    }
    const [, catchAll, name, optional, constraint, optionalAfter] = found;
    if (constraint && !(constraint in CONSTRAINTS)) {
      throw new LoadError(`route template ${pyRepr(template)} uses the constraint ${pyRepr(constraint)}; known: ${Object.keys(CONSTRAINTS).sort().join(', ')}`);
    }
    const group = `(?<${name}>${catchAll ? '.*' : constraint ? CONSTRAINTS[constraint] : '[^/]+'})`;
    pattern += catchAll || optional || optionalAfter ? `(?:/${group})?` : `/${group}`;
    precedence.push(catchAll ? 3 : constraint ? 1 : 2);
  }
  return { pattern: new RegExp(`^${pattern}/?$`, 'i'), precedence };
}

/** Sorts routes by the host's precedence (a stable sort: registration order breaks ties). */
export function byPrecedence(a, b) {
  const length = Math.max(a.precedence.length, b.precedence.length);
  for (let i = 0; i < length; i += 1) {
    const left = a.precedence[i];
    const right = b.precedence[i];
    if (left === right) continue;
    if (left === undefined) return -1;
    if (right === undefined) return 1;
    return left - right;
  }
  return 0;
}

/** The route parameters of `pathname` (as sent, percent-encoded), or null when the route does not match. */
export function matchRoute(route, pathname) {
  const found = route.pattern.exec(pathname);
  if (found === null) return null;
  const params = {};
  for (const [name, value] of Object.entries(found.groups ?? {})) if (value !== undefined) params[name] = decodeURIComponent(value);
  return params;
}

/** host.json's extensions.http.routePrefix, 'api' when unset; a host.json that is not JSON stops start-up. */
export function routePrefix(root) {
  const file = path.join(root, 'host.json');
  let text;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return DEFAULT_ROUTE_PREFIX;
  }
  let host;
  try {
    host = JSON.parse(text);
  } catch (error) {
    throw new LoadError(`${file} is not JSON: ${error.message}`);
  }
  const prefix = host?.extensions?.http?.routePrefix;
  return prefix === undefined || prefix === null ? DEFAULT_ROUTE_PREFIX : String(prefix);
}
