// Prometheus metrics of the calls, with funcwsgi's names, label and buckets
// (funcwsgi/middleware/metrics.py): function_calls_total, function_failures_total
// and function_duration_seconds, each labelled `method`. A call fails when the
// function threw, the runtime answered 5xx, or the call timed out.
import client from 'prom-client';

export const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
export const OTHER_METHOD = 'other'; // any other method string: the label set stays bounded
export const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 180.0];

export class CallMetrics {
  constructor() {
    this.registry = new client.Registry();
    const registers = [this.registry];
    const calls = new client.Counter({ name: 'function_calls_total', help: 'Number of calls processed.', labelNames: ['method'], registers });
    const failures = new client.Counter({ name: 'function_failures_total', help: 'Number of calls that failed (exception, 5xx or timeout).', labelNames: ['method'], registers });
    const duration = new client.Histogram({ name: 'function_duration_seconds', help: 'Duration of calls in seconds.', labelNames: ['method'], buckets: BUCKETS, registers });
    /** One set of children per label value, made once: a call does no label hashing. */
    this.series = new Map();
    for (const method of [...METHODS, OTHER_METHOD]) {
      const series = { calls: calls.labels(method), failures: failures.labels(method), duration: duration.labels(method) };
      series.failures.inc(0);
      series.calls.inc(0);
      duration.zero({ method });
      this.series.set(method, series);
    }
    this.other = this.series.get(OTHER_METHOD);
  }

  seriesOf(method) {
    return this.series.get(method) ?? this.other;
  }

  /** Record one finished call. */
  record(call) {
    const series = this.seriesOf(call.method);
    series.calls.inc();
    if (call.failure !== null || call.status >= 500) series.failures.inc();
    series.duration.observe((performance.now() - call.started) / 1000);
  }

  async exposition() {
    return { body: Buffer.from(await this.registry.metrics()), contentType: this.registry.contentType };
  }
}
