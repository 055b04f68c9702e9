"""What tracing's two largest parts cost, apart: the SDK's span object and its OTLP protobuf encoding.

    python -m bench.otel_parts

Prints the best of 5 timeit repeats of each, in µs of wall time per span, on
this machine now. docs/performance.md quotes a dated run of it to explain
the tracing row; the tracing layer itself is measured by ``make bench``.
"""

from __future__ import annotations

import timeit
from collections.abc import Callable

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

CALLS = 10_000


def best_us(statement: Callable[[], object]) -> float:
    return min(timeit.repeat(statement, number=CALLS, repeat=5)) / CALLS * 1e6


def main() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = TracerProvider().get_tracer("bench")  # no processor: the span object alone

    def one_span() -> None:
        with tracer.start_as_current_span("GET /") as span:
            span.set_attribute("http.request.method", "GET")

    with provider.get_tracer("bench").start_as_current_span("GET /") as span:
        span.set_attribute("http.request.method", "GET")
    spans = exporter.get_finished_spans()
    print(f"span object (start, one attribute, end): {best_us(one_span):.1f} µs per span")
    print(f"OTLP protobuf encoding of one span: {best_us(lambda: encode_spans(spans).SerializeToString()):.1f} µs per span")


if __name__ == "__main__":
    main()
