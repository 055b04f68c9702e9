// Prometheus metrics of the calls, with funcwsgi's names, label and buckets
// (funcwsgi/metrics/): function_calls_total, function_failures_total
// and function_duration_seconds, each labelled `method`, and function_rejected_total,
// the calls refused with 503 under overload (Runtime.admit), and
// function_queueing_delay_seconds, how long calls waited to start (lib/admission.js).
// A call fails when the function threw, the runtime answered 5xx, or the call timed out.
//
// As funcwsgi's LocalCallMetrics, a call only adds to a few numbers of its
// method's series; prom-client reads them when /metrics is scraped (each family
// is a metric object whose get() prom-client's registry formats), so the call
// path does no label hashing and takes no metric-library calls.
import client from 'prom-client';

export const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
export const OTHER_METHOD = 'other'; // any other method string: the label set stays bounded
export const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 180.0];
/** funcwsgi's QUEUED_BUCKETS (funcwsgi/metrics/calls.py). */
export const QUEUED_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0];
export const QUEUED_NAME = 'function_queueing_delay_seconds';
const QUEUED_HELP = 'Seconds a call waited to start: for a thread, or behind the event loop (docs/servers.md#admission).';

/** The three series of one `method` value: counts, the sum, and calls per bucket (not yet cumulative). */
class Series {
  constructor() {
    this.calls = 0;
    this.failures = 0;
    this.seconds = 0;
    this.buckets = new Float64Array(BUCKETS.length + 1);
  }

  record(seconds, failed) {
    this.calls += 1;
    if (failed) this.failures += 1;
    this.seconds += seconds;
    let at = 0;
    while (at < BUCKETS.length && seconds > BUCKETS[at]) at += 1; // `le`: the first bound not below
    this.buckets[at] += 1;
  }
}

export class CallMetrics {
  constructor() {
    this.series = new Map([...METHODS, OTHER_METHOD].map((method) => [method, new Series()]));
    this.other = this.series.get(OTHER_METHOD);
    this.rejected = 0;
    this.cancellations = { client: 0, timeout: 0 };
    this.registry = new client.Registry();
    const all = [...this.series];
    const counter = (name, help, pick) => ({
      name, help, type: 'counter', aggregator: 'sum',
      get: () => ({ name, help, type: 'counter', aggregator: 'sum', values: all.map(([method, series]) => ({ labels: { method }, value: pick(series) })) }),
    });
    this.registry.registerMetric(counter('function_calls_total', 'Number of calls processed.', (s) => s.calls));
    this.registry.registerMetric(counter('function_failures_total', 'Number of calls that failed (exception, 5xx or timeout).', (s) => s.failures));
    const name = 'function_duration_seconds';
    const help = 'Duration of calls in seconds.';
    this.registry.registerMetric({
      name, help, type: 'histogram', aggregator: 'sum',
      get: () => ({ name, help, type: 'histogram', aggregator: 'sum', values: all.flatMap(([method, series]) => histogramValues(method, series)) }),
    });
    const rejected = 'function_rejected_total';
    const rejectedHelp = 'Number of calls refused with 503 because they would have waited past SERVER_QUEUE_TARGET, or SERVER_MAX_INFLIGHT calls were in flight.';
    this.registry.registerMetric({
      name: rejected, help: rejectedHelp, type: 'counter', aggregator: 'sum',
      get: () => ({ name: rejected, help: rejectedHelp, type: 'counter', aggregator: 'sum', values: [{ labels: {}, value: this.rejected }] }),
    });
    const cancelled = 'function_cancelled_total';
    const cancelledHelp = 'Number of calls cancelled: their client left before the answer was complete (client), or they ran past SERVER_CALL_TIMEOUT (timeout).';
    this.registry.registerMetric({
      name: cancelled, help: cancelledHelp, type: 'counter', aggregator: 'sum',
      get: () => ({ name: cancelled, help: cancelledHelp, type: 'counter', aggregator: 'sum', values: Object.entries(this.cancellations).map(([cause, value]) => ({ labels: { cause }, value })) }),
    });
    this.queued = { count: 0, sum: 0, buckets: new Float64Array(QUEUED_BUCKETS.length + 1) };
    this.registry.registerMetric({
      name: QUEUED_NAME, help: QUEUED_HELP, type: 'histogram', aggregator: 'sum',
      get: () => ({ name: QUEUED_NAME, help: QUEUED_HELP, type: 'histogram', aggregator: 'sum', values: queuedValues(this.queued) }),
    });
  }

  /** Show function_spans_dropped_total: spans are exported (TRACE_COLLECTOR_ENDPOINT is set). */
  countDroppedSpans() {
    if (this.spansDropped !== undefined) return;
    this.spansDropped = 0;
    const name = 'function_spans_dropped_total';
    const help = 'Number of spans not delivered to TRACE_COLLECTOR_ENDPOINT: their export failed, or they were unsent when the process stopped.';
    this.registry.registerMetric({
      name, help, type: 'counter', aggregator: 'sum',
      get: () => ({ name, help, type: 'counter', aggregator: 'sum', values: [{ labels: {}, value: this.spansDropped }] }),
    });
  }

  /** `count` spans could not be delivered to the trace collector. */
  droppedSpans(count) {
    this.spansDropped += count;
  }

  /** A call cancelled (sdk.cancelled()) for `cause`: 'client' or 'timeout'. */
  cancelled(cause) {
    this.cancellations[cause] += 1;
  }

  /** A call refused with 503 (docs/servers.md#admission): it never reached the function. */
  reject() {
    this.rejected += 1;
  }

  /** A call waited `seconds` to start. */
  waited(seconds) {
    const queued = this.queued;
    queued.count += 1;
    queued.sum += seconds;
    let at = 0;
    while (at < QUEUED_BUCKETS.length && seconds > QUEUED_BUCKETS[at]) at += 1;
    queued.buckets[at] += 1;
  }

  /** Record one finished call. */
  record(call) {
    (this.series.get(call.method) ?? this.other).record((call.endedAt() - call.started) / 1000, call.failure !== null || call.status >= 500);
    const cause = call.cancelCause();
    if (cause !== null) this.cancellations[cause] += 1;
  }

  async exposition() {
    return { body: Buffer.from(await this.registry.metrics()), contentType: this.registry.contentType };
  }
}

function histogramValues(method, series) {
  const values = [];
  let cumulative = 0;
  for (let at = 0; at <= BUCKETS.length; at += 1) {
    cumulative += series.buckets[at];
    values.push({ labels: { le: at < BUCKETS.length ? BUCKETS[at] : '+Inf', method }, value: cumulative, metricName: 'function_duration_seconds_bucket' });
  }
  values.push({ labels: { method }, value: series.seconds, metricName: 'function_duration_seconds_sum' });
  values.push({ labels: { method }, value: series.calls, metricName: 'function_duration_seconds_count' });
  return values;
}

function queuedValues(queued) {
  const values = [];
  let cumulative = 0;
  for (let at = 0; at <= QUEUED_BUCKETS.length; at += 1) {
    cumulative += queued.buckets[at];
    values.push({ labels: { le: at < QUEUED_BUCKETS.length ? QUEUED_BUCKETS[at] : '+Inf' }, value: cumulative, metricName: `${QUEUED_NAME}_bucket` });
  }
  values.push({ labels: {}, value: queued.sum, metricName: `${QUEUED_NAME}_sum` });
  values.push({ labels: {}, value: queued.count, metricName: `${QUEUED_NAME}_count` });
  return values;
}
