// A runtime shaped like Kyma's nodejs26 image, for comparison only.
//
// It does per call what Kyma's runtime (kyma-project/serverless,
// components/runtimes/nodejs26, read at 779485d) does at its defaults, in our
// own code, on the dependency versions its package.json resolves to:
// - a second 'request' listener, its graceful shutdown's, marks the connection
//   busy and adds a 'finish' listener to the response (lib/helper.js:17-27);
// - Express 5 passes the request through body-parser's four parsers
//   (server.mjs:47-50) and a middleware that reads FUNC_TIMEOUT from the
//   environment and arms res.setTimeout (lib/helper.js:49-55), past the
//   /healthz, /metrics and /favicon.ico routes (server.mjs:59-61);
// - the catch-all route sets the CORS header, answers OPTIONS itself, counts
//   the call, reads the clock, looks up the active span, calls main(req, res)
//   on Express's objects, reads the clock again and records the duration
//   (server.mjs:66-107), with OpenTelemetry metrics read by Prometheus at
//   /metrics (lib/metrics.js).
// Its tracing is set up at every start, collector or not (lib/tracer.js:20-69):
// a provider sampling every call, W3C and B3 propagation, the http and Express
// instrumentations. Both are registered only after everything, Express and
// node:http included, has loaded (ES modules run their static imports first,
// so the `import express` below the set-up in Kyma's server.mjs:41 runs before
// it), so neither patches what a hello world uses and no span is made. A
// function that requires node:http itself (or a CommonJS library that does,
// loaded with it) patches it late, and from then on every call records a
// server span, exported only with TRACE_COLLECTOR_ENDPOINT:
// function-requiring-http/ is such a function.
//
// Also as Kyma: the sdk's libraries (cloudevents, axios), morgan and the OTLP
// exporter are loaded at start-up, the function is imported after the server
// listens, and a throw's answer is built from the active span, which a hello
// world does not have (so it fails and Express answers with its error page).
//
// Run: HANDLER_PATH=function/handler.js SERVER_PORT=8080 node server.mjs
import { createRequire } from 'node:module';
import process from 'node:process';

import bodyParser from 'body-parser';
import express from 'express';
import morgan from 'morgan';

// Kyma's sdk and lib/*.js are CommonJS modules requiring these (and its sdk loads cloudevents and
// axios at start-up), so they are required here too: imported, each would be parsed for its names.
const require = createRequire(import.meta.url);
require('cloudevents');
require('axios');
const { context, metrics, SpanStatusCode, trace } = require('@opentelemetry/api');
const { CompositePropagator, W3CTraceContextPropagator } = require('@opentelemetry/core');
const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-http');
const { PrometheusExporter } = require('@opentelemetry/exporter-prometheus');
const { registerInstrumentations } = require('@opentelemetry/instrumentation');
const { ExpressInstrumentation, ExpressLayerType } = require('@opentelemetry/instrumentation-express');
const { HttpInstrumentation } = require('@opentelemetry/instrumentation-http');
const { B3InjectEncoding, B3Propagator } = require('@opentelemetry/propagator-b3');
const { defaultResource, resourceFromAttributes } = require('@opentelemetry/resources');
const { MeterProvider } = require('@opentelemetry/sdk-metrics');
const { SimpleSpanProcessor } = require('@opentelemetry/sdk-trace-base');
const { AlwaysOnSampler, NodeTracerProvider, ParentBasedSampler } = require('@opentelemetry/sdk-trace-node');
const { ATTR_SERVICE_NAME } = require('@opentelemetry/semantic-conventions');

const handlerPath = process.env.HANDLER_PATH || './handler.js';
const functionName = process.env.FUNC_NAME || '';
const limit = `${Number(process.env.FUNC_BODY_MB_LIMIT || '1')}mb`;
const collector = process.env.TRACE_COLLECTOR_ENDPOINT || '';
const resource = resourceFromAttributes({ [ATTR_SERVICE_NAME]: functionName }).merge(defaultResource());

process.on('uncaughtException', (error) => console.error(`Caught exception: ${error}`));
console.log(`Importing function sources from ${handlerPath}:main`);
console.log(`Tracing configured with endpoint ${collector}`);
console.log(`Publisher Proxy available on address ${process.env.PUBLISHER_PROXY_ADDRESS || ''}`);
console.log(`Starting ${process.env.FUNC_RUNTIME || 'nodejs26'} server ${process.env.SERVER_HOST || '0.0.0.0'}:${process.env.SERVER_PORT || '8080'}`);
setUpTracing();
const exporter = new PrometheusExporter({ preventServerStart: true });
metrics.setGlobalMeterProvider(new MeterProvider({ resource, readers: [exporter] }));
const meter = metrics.getMeter(functionName);
const calls = meter.createCounter('function_calls_total', { description: 'Number of calls to user function' });
const failures = meter.createCounter('function_failures_total', { description: 'Number of exceptions in user function' });
const duration = meter.createHistogram('function_duration_miliseconds', { description: 'Duration of user function in miliseconds' });

let userFunction;
const app = express();
app.use(bodyParser.json({ type: ['application/json', 'application/cloudevents+json'], limit, strict: false }));
app.use(bodyParser.text({ type: ['text/*'], limit }));
app.use(bodyParser.urlencoded({ limit, extended: true }));
app.use(bodyParser.raw({ limit, type: () => true }));
if (process.env.SERVER_INTERNAL_LOGGER) app.use(morgan('combined'));
app.use((req, res, next) => {
  res.setTimeout(Number(process.env.FUNC_TIMEOUT || '180') * 1000, () => res.sendStatus(408));
  next();
});
app.get('/healthz', (req, res) => res.status(200).send('OK'));
app.get('/metrics', (req, res) => exporter.getMetricsRequestHandler(req, res));
app.get('/favicon.ico', (req, res) => res.status(204).end());
app.all('*path', (req, res) => {
  res.header('Access-Control-Allow-Origin', '*');
  if (req.method === 'OPTIONS') {
    res.header('Access-Control-Allow-Methods', req.headers['access-control-request-method']);
    res.header('Access-Control-Allow-Headers', req.headers['access-control-request-headers']);
    res.end();
    return;
  }
  calls.add(1);
  const started = new Date().getTime();
  if (!userFunction) {
    failures.add(1);
    res.status(500).send('User function not loaded');
    return;
  }
  const span = trace.getSpan(context.active());
  try {
    const out = userFunction(req, res);
    if (out && typeof out.then === 'function') out.catch((error) => answerFailure(error, span, res));
  } catch (error) {
    answerFailure(error, span, res);
  }
  duration.record(new Date().getTime() - started);
});

const server = app.listen(Number(process.env.SERVER_PORT || '8080'), process.env.SERVER_HOST || '0.0.0.0');
drainOnShutdown(server);
import(handlerPath).then((module) => {
  if (typeof module.main === 'function') userFunction = module.main;
  else console.error(`${handlerPath} exports no main function`);
}, (error) => console.error('Failed to load user function:', error));

/** Kyma's answer to a throw or a rejection: its text (a thrown string, else a fixed one) on the span and to the client. */
function answerFailure(error, span, res) {
  failures.add(1);
  console.error(error);
  const text = typeof error === 'string' ? error : 'Internal server error';
  span.setStatus({ code: SpanStatusCode.ERROR, message: text });
  span.setAttribute('error', text);
  if (!res.writableEnded) res.status(500).send(text);
}

/** Kyma's tracer set-up: every call sampled, no span processor without a collector, one exporting each span with one. */
function setUpTracing() {
  const provider = new NodeTracerProvider({
    resource,
    sampler: new ParentBasedSampler({ root: new AlwaysOnSampler() }),
    spanProcessors: collector ? [new SimpleSpanProcessor(new OTLPTraceExporter({ url: collector }))] : [],
  });
  const ignored = ['/healthz', '/favicon.ico', '/metrics'];
  registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      new HttpInstrumentation({ ignoreIncomingRequestHook: (req) => ignored.includes(req.url) }),
      new ExpressInstrumentation({ ignoreLayersType: [ExpressLayerType.MIDDLEWARE] }),
    ],
  });
  provider.register({
    propagator: new CompositePropagator({
      propagators: [new W3CTraceContextPropagator(), new B3Propagator({ injectEncoding: B3InjectEncoding.MULTI_HEADER })],
    }),
  });
}

/** Kyma's graceful shutdown: every connection tracked, marked busy per request, idle ones closed at SIGTERM. */
function drainOnShutdown(listening) {
  const connections = new Set();
  let stopping = false;
  listening.on('connection', (connection) => {
    connection.idle = true;
    connections.add(connection);
    connection.on('close', () => connections.delete(connection));
  });
  listening.on('request', (request, response) => {
    const connection = request.socket;
    connection.idle = false;
    response.on('finish', () => {
      connection.idle = true;
      if (stopping) connection.destroy();
    });
  });
  const stop = () => {
    stopping = true;
    listening.close();
    for (const connection of connections) if (connection.idle) connection.destroy();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
