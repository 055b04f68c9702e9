// The HTTP server: node:http directly, every call through the same steps in the
// order funcwsgi's stack declares its layers (funcwsgi/stack.py), outermost first:
//
//   errors -> request id -> access log -> reserved routes -> CORS -> tracing ->
//   metrics -> body limit -> timeout -> CloudEvents -> the function
//
// STEPS lists them as data (the setting that turns each on, the settings it takes),
// logged once at start-up like funcwsgi's stack; handle() -> receive() -> call() take
// them in that order, and the work of each lives in its own module. A step that is
// off costs nothing per call.
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { Admission } from './admission.js';
import { Call, REASONS } from './call.js';
import { http2On, maxInflight, SETTINGS } from './config.js';
import { Connections, NEWEST_REQUEST, OVERLOADED_TEXT, RETRY_AFTER_SECONDS, serverOptions } from './connections.js';
import { currentCall } from './calls.js';
import { claimsEvent, decode, MalformedCloudEvent, BATCH } from './cloudevents.js';
import { Cors } from './cors.js';
import { firstProblem, hookCheck, KYMA_LIVENESS_PATH, LIVENESS_PATH, OK, PROBE_PATHS, READINESS_PATH } from './health.js';
import { buildContext, buildEvent } from './legacy.js';
import { getLogger } from './logs.js';
import { Deadlines } from './deadlines.js';
import { CountedIncomingMessage, PAST_LIMIT, requestHeadRead } from './chunk-sizes.js';
import { CANCEL, NO_ERROR, http2Server, plainHeaders } from './http2.js';
import { CallMetrics } from './metrics.js';
import { mediaType } from './request.js';
import { FunctionResponse, TEXT } from './response.js';
import { answersThroughRes, Signature } from './signatures.js';

const accessLog = getLogger('funcwsgi.access');
const serverLog = getLogger('funcwsgi');

const pyFloat = (n) => (Number.isInteger(n) ? `${n}.0` : String(n)); // as Python's str() shows a float
const pyBool = (b) => (b ? 'True' : 'False');

/** Each step, its switch, and the settings it takes (option -> [field, how Python's str() shows it]). */
export const STEPS = Object.freeze([
  { name: 'errors', enabled: () => true },
  { name: 'request-id', enabled: () => true },
  { name: 'access-log', enabled: (c) => c.serverAccessLog },
  { name: 'reserved-routes', enabled: () => true },
  { name: 'cors', enabled: (c) => c.serverCorsOrigins.length > 0, options: { origins: ['serverCorsOrigins'], methods: ['serverCorsMethods'], headers: ['serverCorsHeaders'], max_age: ['serverCorsMaxAge'], credentials: ['serverCorsCredentials', pyBool] } },
  { name: 'tracing', enabled: (c) => Boolean(c.traceCollectorEndpoint) },
  { name: 'metrics', enabled: (c) => c.serverMetrics },
  { name: 'body-limit', enabled: (c) => c.serverMaxBodySize > 0, options: { max_bytes: ['serverMaxBodySize'] } },
  { name: 'cancellation', enabled: () => true, options: { seconds: ['serverCallTimeout', pyFloat] } },
  { name: 'timeout', enabled: (c) => c.serverCallTimeout > 0, options: { seconds: ['serverCallTimeout', pyFloat] } },
  { name: 'cloudevents', enabled: (c) => c.serverCloudevents },
]);

const DEFAULTS = Object.fromEntries(SETTINGS.map((spec) => [spec.field, spec.default]));
const same = (a, b) => (Array.isArray(a) ? Array.isArray(b) && a.join(',') === b.join(',') : a === b);

/** The steps a call goes through, as funcwsgi logs its stack: `body-limit(max_bytes=2048)` when a setting is not its default. */
export function describeSteps(config) {
  const described = STEPS.filter((step) => step.enabled(config)).map((step) => {
    const changed = Object.entries(step.options ?? {})
      .filter(([, [field]]) => !same(config[field], DEFAULTS[field]))
      .map(([option, [field, show]]) => `${option}=${show ? show(config[field]) : Array.isArray(config[field]) ? config[field].join(',') || "''" : String(config[field])}`);
    return changed.length ? `${step.name}(${changed.join(', ')})` : step.name;
  });
  return [...described, 'function'];
}

const REQUEST_ID_MAX = 128;
const PRINTABLE_ASCII = /^[\x20-\x7e]+$/;
export const usableRequestId = (id) => id.length > 0 && id.length <= REQUEST_ID_MAX && PRINTABLE_ASCII.test(id);
/** 128 random bits as 32 hex digits, cut from a pool of 256 ids written out in hex at once. */
const POOL_IDS = 256;
let pool = '';
let poolAt = 0;
export function newRequestId() {
  if (poolAt >= pool.length) {
    pool = randomBytes(16 * POOL_IDS).toString('hex');
    poolAt = 0;
  }
  poolAt += 32;
  return pool.slice(poolAt - 32, poolAt);
}

const HEALTH_HEADERS = (body) => ['Content-Type', TEXT, 'Content-Length', String(body.length), 'Cache-Control', 'no-store'];

export class Runtime {
  /**
   * @param {object} config the frozen settings
   * @param {object} loaded what loader.loadFunction found
   * @param {{tracing?: object|null, monitor?: object|null, faas?: object|null}} parts
   */
  constructor(config, loaded, { tracing = null, monitor = null, faas = null } = {}) {
    this.config = config;
    this.loaded = loaded;
    this.tracing = tracing;
    this.monitor = monitor;
    this.blocked = monitor ? (call, seconds) => monitor.blockedBy(call, seconds) : null;
    this.metrics = config.serverMetrics ? new CallMetrics() : null;
    if (this.metrics && tracing) {
      this.metrics.countDroppedSpans();
      tracing.dropped = (count) => this.metrics.droppedSpans(count);
    }
    this.faas = config.serverMetrics ? faas : null; // the FaaS metrics over OTLP, beside the Prometheus ones
    this.cors = config.serverCorsOrigins.length ? new Cors(config) : null;
    this.maxBody = config.serverMaxBodySize;
    this.bodyMs = config.serverBodyTimeout * 1000;
    this.sendMs = config.serverSendTimeout * 1000;
    this.tooLarge = Buffer.from(`Request Entity Too Large: the request body is larger than ${this.maxBody} bytes`);
    this.timeout = config.serverCallTimeout;
    this.deadlines = this.timeout > 0 ? new Deadlines(this.timeout, (call) => call.timedOut('the function did not return')) : null;
    this.cloudevents = config.serverCloudevents;
    this.stopping = false;
    this.maxInflight = maxInflight(config);
    this.inflight = 0;
    // A call starts at once on the loop unless the loop's lag has stood past SERVER_QUEUE_TARGET (lib/admission.js).
    this.admission = new Admission(config.serverQueueTarget, 0, { record: this.metrics ? (seconds) => this.metrics.waited(seconds) : undefined });
    this.stopLag = null; // the lag is measured while the server listens
    this.released = () => { this.inflight -= 1; };
    this.rejected = this.metrics ? () => this.metrics.reject() : () => {};
    this.connections = null; // made with the server (listen)
    const probes = [...PROBE_PATHS];
    if (this.metrics && !config.serverMetricsPort) probes.push(config.serverMetricsPath);
    // As funcwsgi's worker, the probes and /metrics answer past SERVER_MAX_INFLIGHT; any other call counts.
    this.probes = new Set(probes);
    this.invoke = makeInvoker(loaded, config);
    this.onEnd = this.endOfCall();
    this.routes = this.reservedRoutes();
    this.posted = loaded.ownRoutes?.size ? loaded.ownRoutes : null;
    this.handle = this.handle.bind(this);
  }

  /** What runs once a call has its answer: metrics, the span, the access log, in one closure. */
  endOfCall() {
    const metrics = this.metrics;
    const faas = this.faas;
    const tracing = this.tracing;
    const logged = this.config.serverAccessLog;
    if (!metrics && !tracing && !logged) return null;
    return (call) => {
      metrics?.record(call);
      faas?.record(call);
      tracing?.end(call);
      if (logged) logAccess(call);
    };
  }

  reservedRoutes() {
    const routes = new Map();
    const liveness = [];
    const readiness = [];
    const { hooks, path } = this.loaded;
    if (hooks.alive) liveness.push(hookCheck(hooks.alive, 'alive', path));
    if (this.monitor) liveness.push(() => this.monitor.livenessProblem());
    if (hooks.ready) readiness.push(hookCheck(hooks.ready, 'ready', path));
    const probe = (checks) => async (call) => {
      const problem = await firstProblem(checks);
      const body = problem ? Buffer.from(problem) : OK;
      call.answer(problem ? 503 : 200, HEALTH_HEADERS(body), body, problem ? REASONS[503] : undefined, true);
    };
    const healthz = (call) => call.answer(200, ['Content-Type', TEXT, 'Content-Length', '2'], OK, undefined, true);
    routes.set(KYMA_LIVENESS_PATH, liveness.length ? probe(liveness) : healthz);
    routes.set('/favicon.ico', (call) => call.answer(204, [], undefined));
    routes.set(READINESS_PATH, probe(readiness));
    routes.set(LIVENESS_PATH, probe(liveness));
    if (this.metrics && !this.config.serverMetricsPort) routes.set(this.config.serverMetricsPath, (call) => this.serveMetrics(call));
    return routes;
  }

  async serveMetrics(call) {
    const { body, contentType } = await this.metrics.exposition();
    call.answer(200, ['Content-Type', contentType, 'Content-Length', String(body.length)], body, undefined, true);
  }

  /**
   * The request listener of the calls' port. RFC 9112 9.3.2: the requests of one connection are served in the
   * order they came, each once the one before it has been answered (node:http hands over a pipelined GET while
   * the body of the POST ahead of it is still coming, and would run it first).
   */
  handle(incoming, outgoing) {
    const socket = incoming.socket;
    requestHeadRead(incoming, outgoing);
    socket[NEWEST_REQUEST] = incoming;
    const line = socket[LINE];
    if (line === undefined) {
      socket[LINE] = NOBODY_WAITS;
    } else {
      if (line === NOBODY_WAITS) socket[LINE] = [incoming, outgoing];
      else line.push(incoming, outgoing);
      return;
    }
    outgoing.once('close', () => this.next(socket));
    this.serve(incoming, outgoing);
  }

  /** The connection's answer is done: the next request that came on it, if any. */
  next(socket) {
    const line = socket[LINE];
    if (line === NOBODY_WAITS || line === undefined) {
      socket[LINE] = undefined;
      return;
    }
    const incoming = line.shift();
    const outgoing = line.shift();
    if (line.length === 0) socket[LINE] = NOBODY_WAITS;
    outgoing.once('close', () => this.next(socket));
    this.serve(incoming, outgoing);
  }

  serve(incoming, outgoing) {
    const connections = this.connections;
    const socket = incoming.socket;
    if (connections !== null) connections.watch(outgoing);
    // RFC 9112 9.6: after a request the connection closes with, nothing more is served on it
    // (node:http still parses what was pipelined behind it); the close comes after its answer.
    if (socket[CLOSING]) return;
    if (!outgoing.shouldKeepAlive) socket[CLOSING] = true;
    this.serveCall(incoming, outgoing);
  }

  /**
   * The request listener of node:http2's server (lib/http2.js): a stream is one call, served as an HTTP/1.1
   * request is, at once (the streams of a connection are independent: none waits for another's answer).
   */
  serveStream(incoming, outgoing) {
    Object.defineProperty(incoming, 'headers', { value: plainHeaders(incoming.headers) });
    // A turn later: a stream its client reset in the same read (rapid reset) never becomes a call.
    setImmediate(() => { if (!incoming.aborted && !incoming.stream.destroyed) this.serveCall(incoming, outgoing); });
  }

  serveCall(incoming, outgoing) {
    const connections = this.connections;
    const malformed = framingProblem(incoming);
    if (malformed !== null) return void refuse(outgoing, malformed);
    if (incoming.httpVersion === '1.0' && outgoing.shouldKeepAlive && asksClose(incoming.headers.connection)) outgoing.shouldKeepAlive = false;
    const headers = incoming.headers;
    let requestId = headers['x-request-id'];
    if (requestId === undefined || !usableRequestId(requestId)) requestId = newRequestId();
    const call = new Call(this, incoming, outgoing, requestId);
    // As funcwsgi's request-id layer, the call is the current one from here on (probes and the
    // runtime's own answers included), for sdk.getRequest() and the ids of its log records.
    // enterWith() costs one context frame, where run() or a scope costs two and the async-hook
    // bookkeeping (about 4% of a hello world's instructions). node:http calls this listener from
    // a callback of its parser, one per request (pipelined ones too), and node restores that
    // callback's own frame when it returns: the call's frame reaches no other request.
    currentCall.enterWith(call);
    try {
      if (this.config.serverAccessLog) call.onEnd = logAccess;
      const method = incoming.method;
      if (method === 'GET' || method === 'HEAD') {
        const route = this.routes.get(call.path);
        if (route !== undefined) {
          if (!call.http2) connections?.dispatched(incoming, outgoing);
          if (!this.probes.has(call.path) && !this.admit(call)) return;
          return void Promise.resolve(route(call)).catch((error) => call.fail(error));
        }
      } else if (method === 'POST' && this.posted !== null) {
        // The platform contract's own routes (Fission's specialise calls): its body is read within
        // SERVER_MAX_BODY_SIZE, and no step times, counts or traces it: loading a function is no call of it.
        const route = this.posted.get(call.path);
        if (route !== undefined) return void this.receive(call, route);
      }
      if (this.cors !== null) {
        const cors = this.cors.consider(method, headers);
        if (cors !== null) {
          if (cors.preflight) return void call.answer(...cors.preflight);
          call.extraHeaders = cors.headers;
        }
      }
      call.onEnd = this.onEnd;
      if (this.tracing !== null) return void this.tracing.run(call, () => this.receive(call));
      this.receive(call);
    } catch (error) {
      call.fail(error);
    }
  }

  /** The body limit, then the body, then the call (or `route`, a contract's own POST route). */
  receive(call, route = null) {
    const incoming = call.incoming;
    const declared = incoming.headers['content-length'];
    // HTTP/2 has no Transfer-Encoding: a stream has a body unless its HEADERS frame ended it.
    const noBody = call.http2 ? incoming.stream.endAfterHeaders : declared === undefined && incoming.headers['transfer-encoding'] === undefined;
    // Without a body the call starts now: its timeout runs from the moment the call began.
    if (noBody) return this.call(call, null, call.started, route);
    if (this.maxBody > 0 && declared !== undefined && Number(declared) > this.maxBody) return this.refuseBody(call);
    if (declared === '0') return this.call(call, EMPTY, call.started, route);
    if (call.http2) this.timeBody(call);
    else this.connections?.receivingBody(incoming.socket);
    if (!call.http2 && declared === undefined) {
      if (incoming[PAST_LIMIT]) return this.refuseBody(call);
      incoming.once(PAST_LIMIT, () => {
        incoming.removeAllListeners('data');
        this.refuseBody(call);
      });
    }
    const chunks = [];
    let size = 0;
    incoming.on('data', (chunk) => {
      size += chunk.length;
      if (this.maxBody > 0 && size > this.maxBody) {
        incoming.removeAllListeners('data');
        incoming.pause();
        this.refuseBody(call);
        return;
      }
      chunks.push(chunk);
    });
    incoming.on('end', () => {
      if (call.http2) {
        incoming.setTimeout(0);
        // node:http2 ends the body of a stream its client reset as if it were whole, and does not hold
        // DATA frames to their content-length (RFC 9113 section 8.1.1): neither reaches the function.
        if (incoming.aborted) return;
        if (declared !== undefined && Number(declared) !== size) return void call.reply(400, MALFORMED_HTTP2);
      }
      if (call.answered) return;
      if (!call.http2 && notTrailer(incoming.rawTrailers)) return void refuse(call.outgoing, BAD_REQUEST_TEXT);
      currentCall.enterWith(call); // a later callback of the socket: outside the call's frame
      this.call(call, chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size), performance.now(), route);
    });
    incoming.on('error', () => {}); // the client went away: its call has nobody to answer
  }

  /** Admission (docs/servers.md#admission): true when the call may run (it counts until its response closes), else it got 503. */
  admit(call) {
    const admission = this.admission;
    if ((this.maxInflight !== 0 && this.inflight >= this.maxInflight) || !admission.admit(0)) {
      // As funcwsgi's worker: never reaches the function, so neither its metrics nor the access log count it.
      call.onEnd = null;
      this.rejected();
      call.outgoing.shouldKeepAlive = false;
      call.answer(503, ['Content-Type', TEXT, 'Content-Length', String(OVERLOADED.length), 'Retry-After', RETRY_AFTER], OVERLOADED, 'Service Unavailable');
      return false;
    }
    admission.record(admission.delay);
    this.inflight += 1;
    if (this.connections !== null && !call.http2) this.connections.admitted(call.outgoing);
    else call.outgoing.on('close', this.released); // a server not made by listen(); a response closes once
    return true;
  }

  refuseBody(call) {
    if (call.http2) {
      endStreamAfter(call); // the rest of the body is not read: the client is told to stop sending it
    } else {
      call.outgoing.shouldKeepAlive = false; // the rest of the body is not read
      call.incoming.socket[CLOSING] = true;
    }
    call.reply(413, this.tooLarge);
  }

  /**
   * SERVER_BODY_TIMEOUT on a stream: a pause that long in its body gets the 408 an HTTP/1.1 client gets
   * (not a call: neither metrics nor the access log count it) and the stream is ended.
   */
  timeBody(call) {
    call.incoming.setTimeout(this.bodyMs, () => {
      if (call.answered) return;
      call.onEnd = null;
      endStreamAfter(call);
      call.reply(408, REQUEST_TIMEOUT_TEXT);
    });
  }

  /**
   * SERVER_SEND_TIMEOUT on a stream whose answer has begun: when its client has taken none of what waits
   * to be sent for that long (a flow-control window kept shut), the stream is reset. A connection whose
   * client reads nothing at all is the connection limits' (connections.js).
   */
  timeSending(call) {
    const stream = call.outgoing.stream;
    if (stream.destroyed) return;
    stream.setTimeout(this.sendMs, () => {
      if (stream.writableLength > 0) stream.close(CANCEL);
    });
  }

  /** CloudEvents, the timeout (from `now`, when the body has been read), then the function, inside the call's context. */
  call(call, data, now, route = null) {
    if (!call.http2) this.connections?.dispatched(call.incoming, call.outgoing);
    if (!this.admit(call)) return;
    if (route !== null) {
      call.data = data;
      return void Promise.resolve(route(call)).catch((error) => call.fail(error));
    }
    if (this.deadlines !== null) this.deadlines.add(call, now);
    call.data = data;
    const headers = call.incoming.headers;
    if (this.cloudevents && claimsEvent(headers) && mediaType(headers['content-type']) !== BATCH) {
      try {
        call.cloudEvent = decode(headers, data ?? EMPTY);
      } catch (error) {
        if (error instanceof MalformedCloudEvent) call.reply(400, Buffer.from(`Bad Request: ${error.message}`));
        else call.fail(error);
        return;
      }
    }
    if (call.traceContext !== null) this.tracing.within(call, () => this.invoke(call));
    else this.invoke(call);
  }

  /** Serve on the configured host and port; resolves once listening. */
  listen() {
    const options = serverOptions(this.config);
    if (this.maxBody > 0) options.IncomingMessage = CountedIncomingMessage;
    const server = http.createServer(options, this.handle);
    // An Expect other than 100-continue is ignored, as funcwsgi's worker ignores it (RFC 9110 10.1.1 allows
    // either): node:http's own 417 would drain the body unseen, a chunk size past the limit with it.
    server.on('checkExpectation', this.handle);
    // Expect: 100-continue (RFC 9110 10.1.1): a declared body past SERVER_MAX_BODY_SIZE gets its 413 at once, without
    // the 100 node:http would send first; any other request is told to go on, as node:http tells it.
    server.on('checkContinue', (incoming, outgoing) => {
      const declared = incoming.headers['content-length'];
      if (!(this.maxBody > 0 && declared !== undefined && Number(declared) > this.maxBody)) outgoing.writeContinue();
      this.handle(incoming, outgoing);
    });
    this.server = server;
    const streams = http2On(this.config)
      ? http2Server(this.config, (incoming, outgoing) => this.serveStream(incoming, outgoing), (session, socket) => this.connections.session(session, socket))
      : null;
    this.connections = new Connections(server, this.config, this.rejected, this.released, streams);
    this.stopLag = this.admission.measureLag();
    return listenOn(server, this.config.serverHost, this.config.serverPort, 'SERVER_PORT');
  }

  /** SERVER_METRICS_PORT: only the metrics there, anything else 404. */
  listenMetrics() {
    const path = this.config.serverMetricsPath;
    const notFound = Buffer.from('Not Found');
    const server = http.createServer(async (incoming, outgoing) => {
      const at = incoming.url.indexOf('?');
      const target = at < 0 ? incoming.url : incoming.url.slice(0, at);
      if (target === path && (incoming.method === 'GET' || incoming.method === 'HEAD')) {
        const { body, contentType } = await this.metrics.exposition();
        outgoing.writeHead(200, { 'Content-Type': contentType, 'Content-Length': body.length }).end(body);
        return;
      }
      outgoing.writeHead(404, { 'Content-Type': TEXT, 'Content-Length': notFound.length }).end(notFound);
    });
    this.metricsServer = server;
    return listenOn(server, this.config.serverHost, this.config.serverMetricsPort, 'SERVER_METRICS_PORT');
  }

  /** Stop taking connections, let the calls in flight finish (at most SERVER_GRACEFUL_TIMEOUT), then resolve. */
  stop() {
    this.stopping = true;
    this.metricsServer?.close();
    if (!this.server) return Promise.resolve();
    const server = this.server;
    return new Promise((resolve) => {
      // Answers made from now on close their connection; a keep-alive connection that
      // goes idle (after a stream, say) is closed at the next tick.
      const idle = setInterval(() => server.closeIdleConnections(), 100);
      const timer = setTimeout(() => {
        serverLog.warning(`Stopping with calls still in flight after SERVER_GRACEFUL_TIMEOUT=${this.config.serverGracefulTimeout}s`);
        done();
      }, this.config.serverGracefulTimeout * 1000);
      const done = () => { clearInterval(idle); clearTimeout(timer); this.connections?.stop(); this.stopLag?.(); resolve(); };
      server.close(done);
      server.closeIdleConnections();
      this.connections?.closeSessions(); // HTTP/2: a GOAWAY, and the streams in flight finish
    });
  }
}

function listenOn(server, host, port, portName) {
  return new Promise((resolve, reject) => {
    server.once('error', (error) => reject(Object.assign(new Error(`cannot listen on SERVER_HOST='${host}' ${portName}=${port}: ${error.code === 'EADDRINUSE' ? 'address already in use' : error.code}`), { startup: true })));
    server.listen({ host, port, ipv6Only: false }, () => resolve(server));
  });
}

const EMPTY = Buffer.alloc(0);

// -- requests two parsers could read apart (RFC 9112 sections 3 and 6) --------------------------

/** Set on a socket once a request on it asked for the close, or was refused: later pipelined requests are not served. */
const CLOSING = Symbol('the connection closes after its current answer');
/** The requests of a socket waiting for the one being answered (incoming, outgoing, ...); NOBODY_WAITS: none. */
const LINE = Symbol('the requests waiting on the connection');
const NOBODY_WAITS = Object.freeze([]);
const ABSOLUTE_FORM = /^https?:\/\/[^/?#]*/i;
// The answers of funcwsgi's worker to the same requests (funcwsgi/adapters/_requests.py), word for word.
const BAD_REQUEST_TEXT = 'the request is malformed';
const BAD_FRAMING_TEXT = "the request's Content-Length or Transfer-Encoding is malformed";
const BAD_HOST_TEXT = 'an HTTP/1.1 request needs exactly one Host field';
const INVALID_HOST_TEXT = "the request's Host field is not a host and port";
/**
 * A Host field's value (RFC 9112 section 3.2: uri-host [":" port], RFC 3986 section 3.2.2), as funcwsgi's
 * http layer has it (funcwsgi/middleware/http_rules.py HOST_PATTERN): an IP-literal or a reg-name, then digits.
 */
const HOST = /^(?:\[(?:[0-9A-Fa-f:.]+(?:%25(?:[-A-Za-z0-9._~]|%[0-9A-Fa-f]{2})+)?|[vV][0-9A-Fa-f]+\.[-A-Za-z0-9._~!$&'()*+,;=:]+)\]|(?:[-A-Za-z0-9._~!$&'()*+,;=]|%[0-9A-Fa-f]{2})*)(?::[0-9]*)?$/;
/** Host values found valid (a few per service): the usual call looks in a set, not the pattern. Bounded: clients choose them. */
const GOOD_HOSTS = new Set();
const GOOD_HOSTS_LIMIT = 1024;

function invalidHost(host) {
  if (GOOD_HOSTS.has(host)) return false;
  if (!HOST.test(host)) return true;
  if (GOOD_HOSTS.size < GOOD_HOSTS_LIMIT) GOOD_HOSTS.add(host);
  return false;
}

/** Whether an HTTP/1.0 request's Connection field holds `close` (RFC 9112 section 9.6: close wins; node:http lets keep-alive win). */
function asksClose(connection) {
  return connection !== undefined && connection.toLowerCase().split(',').some((option) => option.trim() === 'close');
}

/**
 * What is wrong with a request node:http's parser accepted but RFC 9112 refuses, or null; an absolute-form target
 * is made origin-form here, so the probes, the access log and req.path see the path it names.
 */
export function framingProblem(incoming) {
  const target = incoming.url;
  if (target.charCodeAt(0) !== 47) { // '/'
    const absolute = ABSOLUTE_FORM.exec(target);
    if (absolute !== null) {
      const rest = target.slice(absolute[0].length);
      incoming.url = rest.charCodeAt(0) === 47 ? rest : `/${rest}`;
    } else if (!(target === '*' && incoming.method === 'OPTIONS')) {
      return BAD_REQUEST_TEXT;
    }
  }
  const codings = incoming.headers['transfer-encoding'];
  if (codings !== undefined && codings.trim().toLowerCase() !== 'chunked') return BAD_FRAMING_TEXT;
  if (incoming.httpVersion === '1.1') {
    const raw = incoming.rawHeaders;
    let hosts = 0;
    for (let i = 0; i < raw.length; i += 2) {
      if (raw[i].length === 4 && raw[i].toLowerCase() === 'host') {
        hosts += 1;
        if (raw[i + 1].includes(',')) return BAD_HOST_TEXT; // a list (`Host: x, y`): one authority or none (RFC 9110 7.2)
      }
    }
    if (hosts !== 1) return BAD_HOST_TEXT;
  }
  const host = incoming.headers.host;
  if (host !== undefined && invalidHost(host)) return INVALID_HOST_TEXT;
  return null;
}

/** Fields that may not be trailers (RFC 9110 section 6.5.1), as funcwsgi's edge has them (adapters/gunicorn/bounds.py). */
const NOT_TRAILERS = new Set(['content-length', 'transfer-encoding', 'host', 'trailer', 'te', 'expect', 'connection', 'content-type', 'content-encoding', 'content-range', 'authorization', 'cookie']);

/** True when a chunked body's trailer section sends a field that may not be a trailer: the request is malformed. */
function notTrailer(rawTrailers) {
  for (let i = 0; i < rawTrailers.length; i += 2) if (NOT_TRAILERS.has(rawTrailers[i].toLowerCase())) return true;
  return false;
}

function refuse(outgoing, text) {
  const body = Buffer.from(text);
  if (outgoing.req.httpVersionMajor === 2) return void outgoing.writeHead(400, { 'Content-Type': TEXT, 'Content-Length': body.length }).end(body);
  outgoing.shouldKeepAlive = false;
  outgoing.req.socket[CLOSING] = true;
  outgoing.writeHead(400, 'Bad Request', { 'Content-Type': TEXT, 'Content-Length': body.length, Connection: 'close' }).end(body);
}
const OVERLOADED = Buffer.from(OVERLOADED_TEXT);
const REQUEST_TIMEOUT_TEXT = Buffer.from('the request did not arrive in time');
/** funcwsgi's answer to a malformed HTTP/2 request (funcwsgi/middleware/http2_requests.py), word for word. */
const MALFORMED_HTTP2 = Buffer.from('the HTTP/2 request is malformed');

/**
 * Once the stream's answer is sent, the stream ends (RST_STREAM NO_ERROR): what the client still sends is not
 * read (RFC 9113 section 8.1). Not before the answer's last frame has left: node:http2 queues a reset ahead of
 * DATA still waiting, which would cut the answer off. The send timeout (timeSending) ends a stream whose
 * client never takes its answer.
 */
function endStreamAfter(call) {
  const stream = call.incoming.stream;
  const endWhenSent = () => {
    if (stream.closed || stream.destroyed) return;
    if (stream.state.localClose) stream.close(NO_ERROR);
    else setTimeout(endWhenSent, 1);
  };
  stream.once('finish', endWhenSent);
}
const RETRY_AFTER = String(RETRY_AFTER_SECONDS);

function logAccess(call) {
  if (!accessLog.isEnabledFor(20)) return;
  const path = call.path;
  const fields = { method: call.method, path, status: call.status || 500, duration_ms: Math.round((call.endedAt() - call.started) * 1000) / 1000, bytes: call.bytesSent, request_id: call.requestId };
  accessLog.info(`${call.method} ${path} ${fields.status}`, fields);
}

// -- calling the function, per signature, chosen once ------------------------------------

function isThenable(value) {
  return value !== null && (typeof value === 'object' || typeof value === 'function') && typeof value.then === 'function';
}

/** The function of `call` for the loaded function's signature: no inspection per call. */
export function makeInvoker(loaded, config) {
  if (loaded.invoke !== undefined) return loaded.invoke; // a platform's contract (lib/platforms/)
  const fn = loaded.fn;
  switch (loaded.signature) {
    case Signature.REQ_RES: {
      const waitsForRes = answersThroughRes(fn);
      return (call) => {
        const res = new FunctionResponse(call);
        call.res = res;
        let result;
        try {
          result = fn(call.req, res);
        } catch (error) {
          return call.fail(error);
        }
        if (isThenable(result)) return void result.then((value) => call.answerWith(value, res), (error) => call.fail(error));
        // An Express-style function that answers later from a callback returns nothing
        // and has not touched res yet: wait for its res.send() (the timeout still applies).
        if (result === undefined && waitsForRes && !res.touched) return;
        call.answerWith(result, res);
      };
    }
    case Signature.REQ:
    case Signature.NONE: {
      const withRequest = loaded.signature === Signature.REQ;
      return (call) => {
        let result;
        try {
          result = withRequest ? fn(call.req) : fn();
        } catch (error) {
          return call.fail(error);
        }
        if (isThenable(result)) return void result.then((value) => call.answerWith(value, null), (error) => call.fail(error));
        call.answerWith(result, null);
      };
    }
    default: {
      const context = buildContext(config, loaded.name);
      return (call) => {
        const res = new FunctionResponse(call);
        call.res = res;
        const sendResponse = (body, status, headers) => {
          if (headers) res.set(headers);
          if (status) res.setCode(status);
          call.answerWith(body, res);
        };
        let result;
        try {
          result = fn(buildEvent(call, call.req, res), { ...context }, sendResponse);
        } catch (error) {
          return call.fail(error);
        }
        if (isThenable(result)) return void result.then((value) => call.answerWith(value, res), (error) => call.fail(error));
        call.answerWith(result, res);
      };
    }
  }
}
