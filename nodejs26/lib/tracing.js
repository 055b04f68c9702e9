// OpenTelemetry tracing of calls, exported over OTLP/HTTP (protobuf) to
// TRACE_COLLECTOR_ENDPOINT, as funcwsgi/middleware/tracing.py does: the caller's
// trace is continued (OTEL_PROPAGATORS, by default W3C trace context, baggage and
// B3 multi-header), one server span per call, spans of sdk.getTracer() and of
// outgoing fetch() calls are its children. Loaded only when the endpoint is set.
import { context, propagation, SpanKind, SpanStatusCode, trace, TraceFlags } from '@opentelemetry/api';
import { ExportResultCode } from '@opentelemetry/core';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import { B3InjectEncoding, B3Propagator } from '@opentelemetry/propagator-b3';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { getLogger, spanIds } from './logs.js';
import { ProtobufSpanExporter } from './otlp.js';

// Shutdown does not wait on telemetry (as funcwsgi/middleware/span_export.py): with the
// collector down or silent, the exporter's retries would hold a stopping pod for
// OTEL_EXPORTER_OTLP_TRACES_TIMEOUT (10 s). The last export gets this long, then the
// spans not delivered are counted (function_spans_dropped_total) and logged once.
export const SHUTDOWN_MILLIS = 500;
const log = getLogger('funcwsgi');

/** The exporter, counting what it delivered and what it could not; told nothing once the process stops. */
class CountingExporter {
  constructor(inner, tracing) {
    this.inner = inner;
    this.tracing = tracing;
    this.sent = 0;
  }

  export(spans, done) {
    this.inner.export(spans, (result) => {
      if (result.code === ExportResultCode.SUCCESS) this.sent += spans.length;
      else this.tracing.drop(spans.length);
      done(result);
    });
  }

  forceFlush() {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }

  shutdown() {
    return this.inner.shutdown();
  }
}

const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'CONNECT', 'TRACE']);

export function buildPropagator(names) {
  const made = {
    tracecontext: () => new W3CTraceContextPropagator(),
    baggage: () => new W3CBaggagePropagator(),
    b3: () => new B3Propagator({ injectEncoding: B3InjectEncoding.SINGLE_HEADER }),
    b3multi: () => new B3Propagator({ injectEncoding: B3InjectEncoding.MULTI_HEADER }),
  };
  return new CompositePropagator({ propagators: names.filter((name) => name !== 'none').map((name) => made[name]()) });
}

export class Tracing {
  constructor(config, functionName) {
    const ours = { 'service.name': config.funcName || functionName };
    if (config.funcNamespace) {
      ours['service.namespace'] = config.funcNamespace;
      ours['k8s.namespace.name'] = config.funcNamespace;
    }
    // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES, when set, win over the function's metadata.
    const resource = defaultResource().merge(resourceFromAttributes(ours)).merge(resourceFromAttributes(fromOtelEnvironment()));
    this.endpoint = config.traceCollectorEndpoint;
    this.exporter = new CountingExporter(new ProtobufSpanExporter(config.traceCollectorEndpoint), this);
    this.ended = 0; // sampled spans handed to the batch processor
    this.lost = 0; // of them, not delivered
    this.stopped = false;
    this.dropped = null; // the metrics' counter, when /metrics is served (server.js sets it)
    const batch = new BatchSpanProcessor({ exporter: this.exporter, scheduledDelayMillis: Number(process.env.OTEL_BSP_SCHEDULE_DELAY) || 500 });
    const counted = {
      onStart: (span, parent) => batch.onStart(span, parent),
      onEnd: (span) => {
        if (span.spanContext().traceFlags & TraceFlags.SAMPLED) this.ended += 1;
        batch.onEnd(span);
      },
      forceFlush: () => batch.forceFlush(),
      shutdown: () => batch.shutdown(),
    };
    this.provider = new TracerProvider({ resource, spanProcessors: [counted] });
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    propagation.setGlobalPropagator(buildPropagator(config.otelPropagators));
    trace.setGlobalTracerProvider(this.provider);
    this.tracer = this.provider.getTracer('funcwsgi');
    // OpenTelemetry's FaaS conventions: what every server span says of the function, from FUNC_*.
    this.function = { 'faas.trigger': 'http', 'faas.name': config.funcName || functionName };
    if (config.funcVersion) this.function['faas.version'] = config.funcVersion;
    this.cold = true;
    this.fields = new Set(propagation.fields());
    spanIds.current = (call) => {
      const span = trace.getActiveSpan() ?? call.span;
      const ids = span?.spanContext();
      return ids && trace.isSpanContextValid(ids) ? [ids.traceId, ids.spanId] : null;
    };
    instrumentFetch(this.provider.getTracer('funcwsgi.fetch'));
  }

  /** Start the call's server span and run `body` inside its context. */
  run(call, body) {
    const headers = call.incoming.headers;
    let parent = context.active();
    for (const field of this.fields) {
      if (headers[field] !== undefined) {
        parent = propagation.extract(parent, headers);
        break;
      }
    }
    const method = call.method;
    const path = call.path;
    const attributes = { 'http.request.method': method, 'url.path': path, ...this.function };
    const at = call.incoming.url.indexOf('?');
    if (at >= 0) attributes['url.query'] = call.incoming.url.slice(at + 1);
    attributes['faas.invocation_id'] = call.requestId;
    attributes['faas.coldstart'] = this.cold;
    this.cold = false;
    const span = this.tracer.startSpan(KNOWN_METHODS.has(method) ? `${method} ${path}` : 'HTTP', { kind: SpanKind.SERVER, attributes }, parent);
    call.span = span;
    call.traceContext = trace.setSpan(parent, span);
    return context.with(call.traceContext, body);
  }

  /** Run `body` in the call's span context again: a body's 'end' event runs outside it. */
  within(call, body) {
    return context.with(call.traceContext, body);
  }

  /** End the call's span with what the call answered. */
  end(call) {
    const span = call.span;
    if (span === null) return;
    span.setAttribute('http.response.status_code', call.status || 500);
    if (call.status >= 500 || call.failure !== null) {
      span.setStatus({ code: SpanStatusCode.ERROR });
      if (call.failure !== null) span.setAttribute('error.type', call.failure);
    }
    span.end();
  }

  /** `count` spans could not be delivered. */
  drop(count) {
    if (this.stopped) return;
    this.lost += count;
    this.dropped?.(count);
  }

  /** Flush what is batched, for SHUTDOWN_MILLIS at most; count and log, once, what did not leave. */
  async shutdown() {
    let timer;
    const late = new Promise((resolve) => { timer = setTimeout(resolve, SHUTDOWN_MILLIS); });
    await Promise.race([this.provider.shutdown().catch(() => {}), late]);
    clearTimeout(timer);
    const unsent = this.ended - this.exporter.sent - this.lost;
    if (unsent > 0) this.drop(unsent); // still queued or in flight
    this.stopped = true;
    if (this.lost > 0) {
      log.warning(`${this.lost} span(s) could not be delivered to TRACE_COLLECTOR_ENDPOINT=${this.endpoint} and were dropped (counted in function_spans_dropped_total)`);
    }
  }
}

export function fromOtelEnvironment() {
  const attributes = {};
  for (const item of (process.env.OTEL_RESOURCE_ATTRIBUTES ?? '').split(',')) {
    const at = item.indexOf('=');
    if (at > 0) attributes[decodeURIComponent(item.slice(0, at).trim())] = decodeURIComponent(item.slice(at + 1).trim());
  }
  if (process.env.OTEL_SERVICE_NAME) attributes['service.name'] = process.env.OTEL_SERVICE_NAME;
  return attributes;
}

/** fetch() with a client span, and the trace context written into the request's headers. */
function instrumentFetch(tracer) {
  const original = globalThis.fetch;
  if (original.funcwsgiTraced) return;
  const traced = async function fetch(input, init) {
    const base = input instanceof Request ? input : null;
    const method = (init?.method ?? base?.method ?? 'GET').toUpperCase();
    const url = new URL(base ? base.url : String(input));
    const span = tracer.startSpan(method, { kind: SpanKind.CLIENT, attributes: { 'http.request.method': method, 'url.full': `${url.origin}${url.pathname}`, 'server.address': url.hostname } });
    const headers = new Headers(init?.headers ?? base?.headers);
    propagation.inject(trace.setSpan(context.active(), span), headers, { set: (carrier, key, value) => carrier.set(key, value) });
    try {
      const response = await original(input, { ...init, headers });
      span.setAttribute('http.response.status_code', response.status);
      if (response.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      return response;
    } catch (error) {
      span.recordException(error);
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw error;
    } finally {
      span.end();
    }
  };
  traced.funcwsgiTraced = true;
  globalThis.fetch = traced;
}
