// The calls in OpenTelemetry's FaaS metric names, exported over OTLP/HTTP beside
// /metrics, as funcwsgi/middleware/faas_metrics.py does: faas.invocations,
// faas.invoke_duration (seconds), faas.errors, faas.timeouts and faas.coldstarts
// (the first call the process serves), each with faas.trigger=http. A periodic
// reader exports them (OTEL_METRIC_EXPORT_INTERVAL, default 60 s) to
// otlpMetricsEndpoint(config). Loaded only when that endpoint is set.
import os from 'node:os';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { BUCKETS } from './metrics.js';
import { ProtobufMetricExporter } from './otlp.js';
import { fromOtelEnvironment } from './tracing.js';

const HTTP = Object.freeze({ 'faas.trigger': 'http' });

export class FaasMetrics {
  constructor(config, endpoint, functionName) {
    const ours = { 'service.name': config.funcName || functionName, 'faas.name': config.funcName || functionName, 'service.instance.id': `${os.hostname()}-${process.pid}` };
    if (config.funcVersion) ours['faas.version'] = config.funcVersion;
    if (config.funcNamespace) {
      ours['service.namespace'] = config.funcNamespace;
      ours['k8s.namespace.name'] = config.funcNamespace;
    }
    // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES, when set, win over the function's metadata.
    const resource = defaultResource().merge(resourceFromAttributes(ours)).merge(resourceFromAttributes(fromOtelEnvironment()));
    const exportIntervalMillis = Number(process.env.OTEL_METRIC_EXPORT_INTERVAL) || 60_000;
    const reader = new PeriodicExportingMetricReader({ exporter: new ProtobufMetricExporter(endpoint), exportIntervalMillis, exportTimeoutMillis: Math.min(30_000, exportIntervalMillis) });
    this.provider = new MeterProvider({ resource, readers: [reader] });
    const meter = this.provider.getMeter('funcwsgi');
    this.invocations = meter.createCounter('faas.invocations', { unit: '{invocation}', description: 'Number of invocations of the function.' });
    this.duration = meter.createHistogram('faas.invoke_duration', { unit: 's', description: "Duration of the function's invocations.", advice: { explicitBucketBoundaries: BUCKETS } });
    this.errors = meter.createCounter('faas.errors', { unit: '{error}', description: 'Number of invocation errors (exception, 5xx or timeout).' });
    this.timeouts = meter.createCounter('faas.timeouts', { unit: '{timeout}', description: 'Number of invocations that timed out.' });
    this.coldstarts = meter.createCounter('faas.coldstarts', { unit: '{coldstart}', description: 'Number of invocation cold starts: the first call a process serves.' });
    this.cold = true;
  }

  /** Record one finished call, as CallMetrics.record does. */
  record(call) {
    if (this.cold) {
      this.cold = false;
      this.coldstarts.add(1, HTTP);
    }
    this.invocations.add(1, HTTP);
    this.duration.record((call.endedAt() - call.started) / 1000, HTTP);
    if (call.failure !== null || call.status >= 500) this.errors.add(1, HTTP);
    if (call.failure === 'timeout') this.timeouts.add(1, HTTP);
  }

  async shutdown() {
    await this.provider.shutdown().catch(() => {});
  }
}
