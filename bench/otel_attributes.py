"""What a span attribute costs the OpenTelemetry SDK and its OTLP encoding, in instructions per span.

    python -m bench.otel_attributes

Four counts under callgrind, each the difference between 200 and 1,200 spans
(start-up cancelled out), with the collector off: a span started and ended
with no attribute, the same with funcwsgi's server span attributes (6 at the
start, the status code after it, and the kind), and the OTLP protobuf encoding
of such spans as the OTLP/HTTP exporter makes it (``encode_spans``, serialized,
100 spans a request). No network and no batch processor: the SDK's own work on
an attribute, which docs/performance.md weighs against the floor of a traced
call (issue 44).

    python -m bench.otel_attributes --time

times the same four instead: CPU microseconds of the calling thread per span,
the median of 21 rounds of 512 spans (made, or encoded in one request of 512,
as the batch processor sends them when calls keep coming),
pinned to one core as ``make bench`` pins the server: what a span costs the
SDK's threads in time, with no server around it.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import tempfile
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

VARIANTS = ("span", "span-attributes", "encoding", "encoding-attributes")
FEW, MANY = 200, 1200
#: What funcwsgi's server span says of a GET / (``faas.invocation_id`` is a request id's length); bench.inprocess uses it too.
ATTRIBUTES: dict[str, str | bool] = {
    "http.request.method": "GET",
    "url.path": "/",
    "faas.trigger": "http",
    "faas.name": "main",
    "faas.invocation_id": "0123456789abcdef0123456789abcdef",
    "faas.coldstart": False,
}


def run(variant: str, spans: int) -> None:
    """Make (and for ``encoding*`` encode) ``spans`` spans of ``variant``; the counted part of a callgrind run."""
    make, encode = span_work(variant)
    gc.collect()
    gc.disable()
    if variant.startswith("span"):
        make(spans)
        return
    make(MANY)  # as many spans made in every run: only their encoding differs
    encode(spans)


def time_per_span(variant: str, rounds: int = 21, batch: int = 512) -> float:
    """Thread CPU µs per span of ``variant``: the median of ``rounds`` rounds of ``batch`` spans."""
    import statistics
    import time

    make, encode = span_work(variant)
    make(batch)  # what an encoding round encodes, made before any round is timed
    per_span: list[float] = []
    for _ in range(rounds):
        started = time.thread_time()
        if variant.startswith("span"):
            make(batch)
        else:
            encode(batch, per_request=batch)
        per_span.append((time.thread_time() - started) / batch * 1e6)
    return statistics.median(per_span)


def span_work(variant: str) -> tuple[Callable[[int], None], Callable[..., None]]:
    """(make ``n`` spans of ``variant``, encode the first ``n`` made), warmed up: no span made yet."""
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult
    from opentelemetry.trace import SpanKind

    class Kept(SpanExporter):
        def __init__(self) -> None:
            self.spans: list[ReadableSpan] = []

        def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
            self.spans.extend(spans)
            return SpanExportResult.SUCCESS

    kept = Kept()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(kept))
    tracer = provider.get_tracer("bench")
    attributed = variant.endswith("attributes")

    def make(count: int) -> None:
        for _ in range(count):
            if attributed:
                span = tracer.start_span("GET /", kind=SpanKind.SERVER, attributes=ATTRIBUTES)
                span.set_attribute("http.response.status_code", 200)
            else:
                span = tracer.start_span("GET /")
            span.end()

    def encode(count: int, per_request: int = 100) -> None:
        for start in range(0, count, per_request):
            encode_spans(kept.spans[start : start + per_request]).SerializePartialToString()

    make(50)  # warm-up
    kept.spans.clear()
    return make, encode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.otel_attributes", description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=VARIANTS, help="make this variant's spans and exit (what callgrind counts)")
    parser.add_argument("--spans", type=int, default=MANY)
    parser.add_argument("--time", action="store_true", help="time each variant (thread CPU per span) instead of counting it")
    args = parser.parse_args(argv)
    if args.only:
        run(args.only, args.spans)
        return 0
    if args.time:
        import os

        from .processes import server_and_load_cores

        core = server_and_load_cores()[0]
        if core is not None:
            os.sched_setaffinity(0, {core})
        print(json.dumps({variant: round(time_per_span(variant), 1) for variant in VARIANTS}, indent=2))
        return 0
    from .callgrind import available, counted_run

    if not available():
        parser.error("valgrind is not installed (Debian package 'valgrind')")
    with tempfile.TemporaryDirectory(prefix="bench-otel-") as tmp:

        def count(variant: str, spans: int) -> int:
            return counted_run(["bench.otel_attributes", "--only", variant, "--spans", str(spans)], Path(tmp) / f"{variant}.{spans}", variant)

        with ThreadPoolExecutor(max_workers=2) as pool:
            runs = {variant: (pool.submit(count, variant, FEW), pool.submit(count, variant, MANY)) for variant in VARIANTS}
            per_span = {variant: round((many.result() - few.result()) / (MANY - FEW)) for variant, (few, many) in runs.items()}
    attributes = len(ATTRIBUTES) + 1
    per_span["per attribute, span"] = round((per_span["span-attributes"] - per_span["span"]) / attributes)
    per_span["per attribute, encoding"] = round((per_span["encoding-attributes"] - per_span["encoding"]) / attributes)
    print(json.dumps(per_span, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
