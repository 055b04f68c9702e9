// A runtime shaped like Kyma's nodejs26 image, for comparison only.
//
// Per call it does what that runtime does: Express 5 routes the request
// through the four body parsers (JSON, text, urlencoded, raw), a middleware
// arming the response timeout, the catch-all route that sets the CORS header,
// counts the call and times it with OpenTelemetry metrics (exported for
// Prometheus at /metrics), then calls main(req, res) on Express's objects.
// Kyma also registers OpenTelemetry's http and Express instrumentations on
// every start, with or without a collector, so every call records spans; that
// is left out unless KYMA_TRACING=true (without it the runtime is flattered).
//
// Run: HANDLER_PATH=dir SERVER_PORT=8080 [KYMA_TRACING=true] node server.mjs
import path from 'node:path';

import { metrics } from '@opentelemetry/api';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { MeterProvider } from '@opentelemetry/sdk-metrics';

const folder = process.env.HANDLER_PATH || './';
const limit = `${Number(process.env.FUNC_BODY_MB_LIMIT || '1')}mb`;
const timeoutSeconds = Number(process.env.FUNC_TIMEOUT || '180');

const exporter = new PrometheusExporter({ preventServerStart: true });
metrics.setGlobalMeterProvider(new MeterProvider({ readers: [exporter] }));
const meter = metrics.getMeter(process.env.FUNC_NAME || 'function');
const calls = meter.createCounter('function_calls_total', { description: 'Number of calls to user function' });
const failures = meter.createCounter('function_failures_total', { description: 'Number of exceptions in user function' });
const duration = meter.createHistogram('function_duration_miliseconds', { description: 'Duration of user function in miliseconds' });

if (process.env.KYMA_TRACING === 'true') await traceEveryCall();
// Imported after the instrumentations are registered, as Kyma does: they patch what express requires.
const { default: express } = await import('express');
const { main } = await import(path.resolve(folder, 'handler.js'));

const app = express();
app.use(express.json({ type: ['application/json', 'application/cloudevents+json'], limit, strict: false }));
app.use(express.text({ type: ['text/*'], limit }));
app.use(express.urlencoded({ limit, extended: true }));
app.use(express.raw({ limit, type: () => true }));
app.use((req, res, next) => {
  res.setTimeout(timeoutSeconds * 1000, () => res.sendStatus(408));
  next();
});
app.get('/healthz', (req, res) => res.status(200).send('OK'));
app.get('/metrics', (req, res) => exporter.getMetricsRequestHandler(req, res));
app.get('/favicon.ico', (req, res) => res.status(204).end());
app.all('*path', (req, res) => {
  res.header('Access-Control-Allow-Origin', '*');
  calls.add(1);
  const started = Date.now();
  try {
    const out = main(req, res);
    if (out && typeof out.then === 'function') {
      out.catch(() => {
        failures.add(1);
        if (!res.writableEnded) res.status(500).send('Internal server error');
      });
    }
  } catch {
    failures.add(1);
    if (!res.writableEnded) res.status(500).send('Internal server error');
  }
  duration.record(Date.now() - started);
});

app.listen(Number(process.env.SERVER_PORT || '8080'), process.env.SERVER_HOST || '127.0.0.1');

/** Kyma's tracer set-up without a collector: a provider sampling every call, W3C and B3, the two instrumentations. */
async function traceEveryCall() {
  const { context, propagation, trace } = await import('@opentelemetry/api');
  const { AsyncLocalStorageContextManager } = await import('@opentelemetry/context-async-hooks');
  const { CompositePropagator, W3CTraceContextPropagator } = await import('@opentelemetry/core');
  const { registerInstrumentations } = await import('@opentelemetry/instrumentation');
  const { ExpressInstrumentation, ExpressLayerType } = await import('@opentelemetry/instrumentation-express');
  const { HttpInstrumentation } = await import('@opentelemetry/instrumentation-http');
  const { B3InjectEncoding, B3Propagator } = await import('@opentelemetry/propagator-b3');
  const { AlwaysOnSampler, ParentBasedSampler, TracerProvider } = await import('@opentelemetry/sdk-trace');
  const provider = new TracerProvider({ sampler: new ParentBasedSampler({ root: new AlwaysOnSampler() }), spanProcessors: [] });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new B3Propagator({ injectEncoding: B3InjectEncoding.MULTI_HEADER })] }));
  trace.setGlobalTracerProvider(provider);
  const ignored = new Set(['/healthz', '/favicon.ico', '/metrics']);
  registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      new HttpInstrumentation({ ignoreIncomingRequestHook: (req) => ignored.has(req.url) }),
      new ExpressInstrumentation({ ignoreLayersType: [ExpressLayerType.MIDDLEWARE] }),
    ],
  });
}
