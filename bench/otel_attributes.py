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
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import tempfile
from collections.abc import Sequence
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

    make(50)  # warm-up
    kept.spans.clear()
    gc.collect()
    gc.disable()
    if variant.startswith("span"):
        make(spans)
        return
    make(MANY)  # as many spans made in every run: only their encoding differs
    for start in range(0, spans, 100):
        encode_spans(kept.spans[start : start + 100]).SerializePartialToString()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.otel_attributes", description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=VARIANTS, help="make this variant's spans and exit (what callgrind counts)")
    parser.add_argument("--spans", type=int, default=MANY)
    args = parser.parse_args(argv)
    if args.only:
        run(args.only, args.spans)
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
