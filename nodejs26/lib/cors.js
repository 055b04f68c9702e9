// Cross-origin calls from browsers (CORS) for the origins SERVER_CORS_ORIGINS lists:
// the same behaviour as funcwsgi/middleware/cors.py. Calls without an Origin, and
// from origins not allowed, pass untouched (a browser then blocks the answer).
import { TOKEN } from './config.js';

export const FORBIDDEN = Buffer.from('Forbidden: CORS preflight refused');

export class Cors {
  constructor(config) {
    this.origins = new Set(config.serverCorsOrigins);
    this.anyOrigin = this.origins.has('*');
    this.methods = new Set(config.serverCorsMethods);
    this.anyHeader = config.serverCorsHeaders.includes('*');
    this.allowHeaders = config.serverCorsHeaders.join(', ');
    const shared = [];
    if (config.serverCorsCredentials) shared.push('Access-Control-Allow-Credentials', 'true');
    // With a wildcard and no credentials the answer is the same for every origin.
    this.wildcard = this.anyOrigin && !config.serverCorsCredentials;
    if (!this.wildcard) shared.push('Vary', 'Origin');
    this.simpleHeaders = [...shared, 'Access-Control-Expose-Headers', 'X-Request-Id'];
    this.preflightHeaders = [...shared, 'Access-Control-Allow-Methods', config.serverCorsMethods.join(', '), 'Access-Control-Max-Age', String(config.serverCorsMaxAge)];
    // Where the answer depends on the origin, every answer says so, the ones without CORS headers too: a cache
    // must not give a browser's CORS call the answer it kept for a call without Origin (Fetch, "CORS protocol and HTTP caches").
    this.others = this.wildcard ? null : { headers: ['Vary', 'Origin'] };
  }

  /**
   * What the call gets: null (no CORS), { headers } to add to its answer, or
   * { preflight: [status, headers, body] } answered without calling the function.
   */
  consider(method, headers) {
    const origin = headers.origin;
    if (origin === undefined) return this.others;
    const allowed = this.anyOrigin || this.origins.has(origin);
    const requested = headers['access-control-request-method'];
    if (method === 'OPTIONS' && requested !== undefined) {
      if (!allowed || !this.methods.has(requested.toUpperCase())) {
        const refused = ['Content-Type', 'text/plain; charset=utf-8', 'Content-Length', String(FORBIDDEN.length)];
        if (!this.wildcard) refused.push('Vary', 'Origin');
        return { preflight: [403, refused, FORBIDDEN] };
      }
      const asked = headers['access-control-request-headers'];
      // With "*" the caller's own list is echoed, only when it is a list of header names.
      const allowHeaders = this.anyHeader ? (asked && asked.split(',').every((name) => TOKEN.test(name.trim())) ? asked : '') : this.allowHeaders;
      const out = ['Access-Control-Allow-Origin', this.wildcard ? '*' : origin, ...this.preflightHeaders, 'Content-Length', '0'];
      if (allowHeaders) out.push('Access-Control-Allow-Headers', allowHeaders);
      return { preflight: [204, out, undefined] };
    }
    if (!allowed) return this.others;
    return { headers: ['Access-Control-Allow-Origin', this.wildcard ? '*' : origin, ...this.simpleHeaders] };
  }
}
