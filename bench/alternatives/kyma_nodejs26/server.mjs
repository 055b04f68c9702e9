// A runtime shaped like Kyma's nodejs26 image, for comparison only.
//
// Per call it does what that runtime does: Express 5 routes the request
// through the four body parsers (JSON, text, urlencoded, raw), a middleware
// arming the response timeout, the catch-all route that sets the CORS header,
// counts the call and times it with OpenTelemetry metrics (exported for
// Prometheus at /metrics), then calls main(req, res) on Express's objects.
// Kyma's per-call tracing (the http and express instrumentations) is left
// out, which only flatters this runtime.
//
// Run: HANDLER_PATH=dir SERVER_PORT=8080 node server.mjs
import path from 'node:path';

import { metrics } from '@opentelemetry/api';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import express from 'express';

const folder = process.env.HANDLER_PATH || './';
const limit = `${Number(process.env.FUNC_BODY_MB_LIMIT || '1')}mb`;
const timeoutSeconds = Number(process.env.FUNC_TIMEOUT || '180');

const exporter = new PrometheusExporter({ preventServerStart: true });
metrics.setGlobalMeterProvider(new MeterProvider({ readers: [exporter] }));
const meter = metrics.getMeter(process.env.FUNC_NAME || 'function');
const calls = meter.createCounter('function_calls_total', { description: 'Number of calls to user function' });
const failures = meter.createCounter('function_failures_total', { description: 'Number of exceptions in user function' });
const duration = meter.createHistogram('function_duration_miliseconds', { description: 'Duration of user function in miliseconds' });

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
