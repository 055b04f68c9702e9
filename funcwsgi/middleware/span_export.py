"""Where spans leave a worker: the SDK's batch processor and OTLP/HTTP exporter, bounded at shutdown.

While the worker serves, spans leave as OpenTelemetry's own batch processor
and exporter send them, retries included. When it stops, the collector gets
one more attempt, bounded by :data:`LAST_EXPORT_SECONDS` in all, and no
retry: a collector that is down or silent must not hold a stopping pod for
the exporter's retries (up to ``OTEL_EXPORTER_OTLP_TRACES_TIMEOUT`` per
batch, 10 s by default). Every span that does not reach the collector is
counted (``function_spans_dropped`` in ``/metrics``) and, at shutdown,
logged in one line.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import ReadableSpan
    from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

log = logging.getLogger("funcwsgi")

#: Seconds the last export at shutdown may take, the batches still queued all in it.
LAST_EXPORT_SECONDS = 0.3
#: Seconds shutdown waits for the batch processor's thread: the last export, and a regular export
#: still blocked on a silent collector, which then is given up with its spans counted as dropped.
SHUTDOWN_SECONDS = 0.5

#: Makes an OTLP/HTTP exporter to the collector; the argument is its timeout (None: OTEL_EXPORTER_OTLP_TRACES_TIMEOUT).
MakeExporter = Callable[[float | None], "SpanExporter"]


def span_processor(endpoint: str, dropped: Callable[[int], None] | None = None) -> Any:
    """A batch span processor exporting to ``endpoint``; ``dropped(count)`` is told of every span lost."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

    def make(timeout: float | None) -> SpanExporter:
        return OTLPSpanExporter(endpoint=endpoint, timeout=timeout)

    class BoundedExporter(SpanExporter):
        """The regular exporter while serving; at shutdown, one attempt with what time is left, then none."""

        def __init__(self) -> None:
            self.regular = make(None)
            self.deadline: float | None = None  # set at shutdown
            self.given_up = False  # the last attempt failed: the rest is dropped unsent
            self.sent = 0
            self.lost = 0
            self.lock = threading.Lock()

        def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
            result = self.regular.export(spans) if self.deadline is None else self.last_export(spans)
            if result is SpanExportResult.SUCCESS:
                with self.lock:
                    self.sent += len(spans)
            else:
                self.drop(len(spans))
            return result

        def last_export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
            assert self.deadline is not None
            remaining = self.deadline - time.monotonic()
            if self.given_up or remaining <= 0:
                return SpanExportResult.FAILURE
            last = make(remaining)  # its retries stop at its timeout: at the deadline
            try:
                result = last.export(spans)
            finally:
                last.shutdown()
            if result is not SpanExportResult.SUCCESS:
                self.given_up = True
            return result

        def drop(self, count: int) -> None:
            with self.lock:
                self.lost += count
            if dropped is not None:
                dropped(count)

        def close_by(self, deadline: float) -> None:
            """From now on one bounded attempt; a regular export waiting to retry gives up now."""
            self.deadline = deadline
            self.regular.shutdown()

        def shutdown(self) -> None:
            pass  # the regular exporter is shut by close_by(); each last one by itself

    class BoundedBatchSpanProcessor(BatchSpanProcessor):
        """OpenTelemetry's batch processor, whose shutdown ends within :data:`SHUTDOWN_SECONDS`."""

        def __init__(self) -> None:
            self.exporter = BoundedExporter()
            self.ended = itertools.count()  # spans handed over: next() is atomic under the GIL
            super().__init__(self.exporter)

        def on_end(self, span: ReadableSpan) -> None:
            if span.context.trace_flags.sampled:  # what the batch processor keeps
                next(self.ended)
            super().on_end(span)

        def shutdown(self) -> None:
            exporter = self.exporter
            if exporter.deadline is not None:
                return
            exporter.close_by(time.monotonic() + LAST_EXPORT_SECONDS)
            # The SDK's shutdown waits for its thread as long as an export takes (up to 30 s): run it
            # aside and wait a bounded time; a thread still blocked is left to the process's exit.
            stopping = threading.Thread(target=super().shutdown, name="funcwsgi-spans-shutdown", daemon=True)
            stopping.start()
            stopping.join(SHUTDOWN_SECONDS)
            handed = next(self.ended)
            with exporter.lock:
                unsent = handed - exporter.sent - exporter.lost
            if unsent > 0:
                exporter.drop(unsent)  # queued or in flight when time ran out
            if exporter.lost:
                log.warning(
                    "%d span(s) could not be delivered to TRACE_COLLECTOR_ENDPOINT=%s and were dropped (counted in function_spans_dropped)",
                    exporter.lost,
                    endpoint,
                )

    return BoundedBatchSpanProcessor()
