// The OTLP/HTTP protobuf span and metric exporters: OpenTelemetry's own exporter machinery
// (serializer, bounded queue, retries, self-metrics) with a transport that sends
// each export with a Content-Length. The stock Node transport streams the body
// chunked, which receivers built on simple HTTP servers (Python's http.server,
// as the kit's and oteltap's are) read as empty.
import http from 'node:http';
import https from 'node:https';
import { createOtlpNetworkExportDelegate, ExporterMetrics, OTLPExporterBase, OTLPExporterError } from '@opentelemetry/otlp-exporter-base';
import { MetricsExporterMetricsHelper, ProtobufMetricsSerializer, ProtobufTraceSerializer, TraceExporterMetricsHelper } from '@opentelemetry/otlp-transformer';

const RETRYABLE = new Set([429, 502, 503, 504]);

/** OTEL_EXPORTER_OTLP_<SIGNAL>_HEADERS / OTEL_EXPORTER_OTLP_HEADERS: k=v,k2=v2 (URL-encoded values). */
function otelHeaders(environ, signal = 'TRACES') {
  const raw = environ[`OTEL_EXPORTER_OTLP_${signal}_HEADERS`] ?? environ.OTEL_EXPORTER_OTLP_HEADERS ?? '';
  const headers = {};
  for (const item of raw.split(',')) {
    const at = item.indexOf('=');
    if (at > 0) headers[decodeURIComponent(item.slice(0, at).trim())] = decodeURIComponent(item.slice(at + 1).trim());
  }
  return headers;
}

class LengthTransport {
  constructor(url, headers) {
    this.url = new URL(url);
    this.client = this.url.protocol === 'https:' ? https : http;
    this.agent = new this.client.Agent({ keepAlive: true });
    this.headers = { ...headers, 'Content-Type': 'application/x-protobuf' };
  }

  send(data, timeoutMillis) {
    return new Promise((resolve) => {
      const request = this.client.request(this.url, { method: 'POST', agent: this.agent, timeout: timeoutMillis, headers: { ...this.headers, 'Content-Length': data.length } }, (response) => {
        const chunks = [];
        response.on('data', (chunk) => chunks.push(chunk));
        response.on('end', () => {
          const code = response.statusCode ?? 0;
          if (code >= 200 && code < 300) resolve({ status: 'success', data: new Uint8Array(Buffer.concat(chunks)) });
          else if (RETRYABLE.has(code)) resolve({ status: 'retryable', retryInMillis: Number(response.headers['retry-after']) * 1000 || undefined });
          else resolve({ status: 'failure', error: new OTLPExporterError(`the collector answered ${code}`, code) });
        });
      });
      request.on('timeout', () => request.destroy(new Error('the collector did not answer in time')));
      request.on('error', (error) => resolve({ status: 'retryable', error }));
      request.end(data);
    });
  }

  shutdown() {
    this.agent.destroy();
  }
}

export class ProtobufSpanExporter extends OTLPExporterBase {
  constructor(url, environ = process.env) {
    const timeoutMillis = Number(environ.OTEL_EXPORTER_OTLP_TRACES_TIMEOUT ?? environ.OTEL_EXPORTER_OTLP_TIMEOUT) || 10_000;
    const metrics = new ExporterMetrics({ componentType: 'otlp_http_span_exporter', metricsHelper: TraceExporterMetricsHelper, url, responseAttributesFromError: (error) => (error ? { 'http.response.status_code': error.code } : { 'http.response.status_code': 200 }) });
    super(createOtlpNetworkExportDelegate({ timeoutMillis, concurrencyLimit: 30 }, ProtobufTraceSerializer, metrics, new LengthTransport(url, otelHeaders(environ))));
  }
}

export class ProtobufMetricExporter extends OTLPExporterBase {
  constructor(url, environ = process.env) {
    const timeoutMillis = Number(environ.OTEL_EXPORTER_OTLP_METRICS_TIMEOUT ?? environ.OTEL_EXPORTER_OTLP_TIMEOUT) || 10_000;
    const metrics = new ExporterMetrics({ componentType: 'otlp_http_metric_exporter', metricsHelper: MetricsExporterMetricsHelper, url, responseAttributesFromError: (error) => (error ? { 'http.response.status_code': error.code } : { 'http.response.status_code': 200 }) });
    super(createOtlpNetworkExportDelegate({ timeoutMillis, concurrencyLimit: 30 }, ProtobufMetricsSerializer, metrics, new LengthTransport(url, otelHeaders(environ, 'METRICS'))));
  }
}
