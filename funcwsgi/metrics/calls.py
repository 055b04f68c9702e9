"""The call metrics' stores: counted in this process, or in prometheus_client's per-process files.

The series and their names are described in :mod:`funcwsgi.metrics`.
"""

from __future__ import annotations

import itertools
import threading
from bisect import bisect_left, bisect_right
from collections import deque
from collections.abc import Callable, Iterator
from itertools import repeat, starmap
from typing import TYPE_CHECKING, Any

from ..config import Config
from .multiprocess import use_multiprocess_dir

if TYPE_CHECKING:
    from prometheus_client import Counter, Histogram

METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
OTHER_METHOD = "other"  # any other method string: the label set stays bounded
CANCELLED_HELP = "Number of calls cancelled: their client left before the answer was complete (client), or they ran past SERVER_CALL_TIMEOUT (timeout)."
CANCEL_CAUSES = ("client", "timeout")
REJECTED_HELP = "Number of calls refused with 503 because they would have waited past SERVER_QUEUE_TARGET, or SERVER_MAX_INFLIGHT calls were in flight."
DROPPED_SPANS_NAME = "function_spans_dropped"
DROPPED_SPANS_HELP = "Number of spans not delivered to TRACE_COLLECTOR_ENDPOINT: their export failed, or they were unsent when the process stopped."
QUEUED_NAME = "function_queueing_delay_seconds"
QUEUED_HELP = "Seconds a call waited to start: for a thread, or behind the event loop (docs/servers.md#admission)."
#: Queueing delays: from a millisecond to past the longest sensible SERVER_QUEUE_TARGET (nodejs26/lib/metrics.js has the same).
QUEUED_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, float("inf"))
BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 180.0, float("inf"))
#: Calls a method's series tallies before it folds them into its counts (a scrape folds whatever is tallied first).
FOLD_AT = 1000


class LocalSeries:
    """The three series of one ``method`` label value, counted in this process.

    One lock and a few additions per call; prometheus_client's own metric
    objects take three locks and several calls for the same record.
    """

    __slots__ = ("lock", "calls", "failures", "seconds", "buckets")

    def __init__(self, bounds: tuple[float, ...] = BUCKETS) -> None:
        self.lock = threading.Lock()
        self.calls = 0
        self.failures = 0
        self.seconds = 0.0
        self.buckets = [0] * len(bounds)  # calls per bucket, not yet cumulative

    def record(self, seconds: float, failed: bool) -> None:
        # acquire/release rather than `with`: the context-manager protocol costs as much as the rest.
        self.lock.acquire()
        try:
            self.calls += 1
            if failed:
                self.failures += 1
            self.seconds += seconds
            self.buckets[bisect_left(BUCKETS, seconds)] += 1  # `le`: the first bound not below
        finally:
            self.lock.release()


class CallSeries(LocalSeries):
    """The series of one ``method`` label value: a call that did not fail is tallied, and counted at the next fold.

    Recording a call took a frame, a lock and a bisect, about 3,000 instructions of every call
    (``python -m bench.edge_calls --count``). A tally appends its duration to a deque (an append and a
    ``popleft`` are atomic, with the GIL and without it: no lock), and :meth:`fold` counts what was
    tallied, under the lock, once :data:`FOLD_AT` durations have gathered and before every scrape
    (:meth:`LocalCallMetrics.collect`). A failed call is recorded at once, with its failure, so the
    counts never show a failure without its call.
    """

    __slots__ = ("tallied",)

    def __init__(self) -> None:
        super().__init__()
        self.tallied: deque[float] = deque()

    def tally(self, seconds: float, failed: bool) -> None:
        """A call that took ``seconds``: counted at the next fold (a failed one at once)."""
        if failed:
            self.record(seconds, True)
            return
        tallied = self.tallied
        tallied.append(seconds)
        if len(tallied) >= FOLD_AT:
            self.fold()

    def fold(self) -> None:
        """Count the calls tallied so far, in C's loops rather than one Python loop per call."""
        tallied = self.tallied
        self.lock.acquire()
        try:
            # Only a fold takes from the deque, one at a time: at least this many are there.
            durations = sorted(starmap(tallied.popleft, repeat((), len(tallied))))
            below = 0
            buckets = self.buckets
            for index, bound in enumerate(BUCKETS):  # `le`: a call counts in the first bucket whose bound is not below it
                within = bisect_right(durations, bound, below)
                buckets[index] += within - below
                below = within
            self.calls += len(durations)
            self.seconds += sum(durations)
        finally:
            self.lock.release()


class LocalCallMetrics:
    """The call metrics of a single process, exposed through a collector at scrape time.

    prometheus_client is imported only when ``/metrics`` is first scraped, so
    a server starts without it.
    """

    def __init__(self) -> None:
        self.series = {method: CallSeries() for method in (*METHODS, OTHER_METHOD)}
        self.registered = False
        self.rejected = 0
        self.rejected_lock = threading.Lock()
        self.cancellations = dict.fromkeys(CANCEL_CAUSES, 0)
        self.queued = LocalSeries(QUEUED_BUCKETS)
        self.spans_dropped: int | None = None  # a series only while spans are exported
        self.flushes: list[Callable[[], None]] = []

    def count_dropped_spans(self) -> None:
        """Show ``function_spans_dropped`` (tracing is on)."""
        with self.rejected_lock:
            if self.spans_dropped is None:
                self.spans_dropped = 0

    def dropped_spans(self, count: int) -> None:
        """``count`` spans could not be delivered to the trace collector."""
        with self.rejected_lock:
            self.spans_dropped = (self.spans_dropped or 0) + count

    def reject(self) -> None:
        """A call the server refused with 503 (docs/servers.md#admission)."""
        with self.rejected_lock:
            self.rejected += 1

    def cancelled(self, cause: str) -> None:
        """A call cancelled (``sdk.cancelled()``) for ``cause``: ``client`` or ``timeout``."""
        with self.rejected_lock:
            self.cancellations[cause] += 1

    def waited(self, seconds: float, calls: int = 1) -> None:
        """``calls`` calls waited ``seconds`` each to start."""
        queued = self.queued
        queued.lock.acquire()
        try:
            queued.calls += calls
            queued.seconds += seconds * calls
            queued.buckets[bisect_left(QUEUED_BUCKETS, seconds)] += calls
        finally:
            queued.lock.release()

    def before_collect(self, flush: Callable[[], None]) -> None:
        """Call ``flush`` first at every scrape: it records what it holds back (the loop's waits, :mod:`funcwsgi.eventloop.gate`)."""
        self.flushes.append(flush)

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily

        for flush in self.flushes:
            flush()

        calls = CounterMetricFamily("function_calls", "Number of calls processed.", labels=["method"])
        failures = CounterMetricFamily("function_failures", "Number of calls that failed (exception, 5xx or timeout).", labels=["method"])
        duration = HistogramMetricFamily("function_duration_seconds", "Duration of calls in seconds.", labels=["method"])
        for method, series in self.series.items():
            series.fold()
            with series.lock:
                counted, failed, seconds, buckets = series.calls, series.failures, series.seconds, list(series.buckets)
            calls.add_metric([method], counted)
            failures.add_metric([method], failed)
            cumulative = list(itertools.accumulate(buckets))
            duration.add_metric([method], [(_bound(le), count) for le, count in zip(BUCKETS, cumulative, strict=True)], sum_value=seconds)
        yield calls
        yield failures
        yield duration
        rejected = CounterMetricFamily("function_rejected", REJECTED_HELP)
        rejected.add_metric([], self.rejected)
        yield rejected
        cancelled = CounterMetricFamily("function_cancelled", CANCELLED_HELP, labels=["cause"])
        for cause, count in self.cancellations.items():
            cancelled.add_metric([cause], count)
        yield cancelled
        queued = HistogramMetricFamily(QUEUED_NAME, QUEUED_HELP)
        with self.queued.lock:
            counted, seconds, buckets = self.queued.calls, self.queued.seconds, list(self.queued.buckets)
        cumulative = list(itertools.accumulate(buckets))
        queued.add_metric([], [(_bound(le), count) for le, count in zip(QUEUED_BUCKETS, cumulative, strict=True)], sum_value=seconds)
        yield queued
        if self.spans_dropped is not None:
            yield CounterMetricFamily(DROPPED_SPANS_NAME, DROPPED_SPANS_HELP, value=self.spans_dropped)

    def register(self) -> None:
        from prometheus_client import REGISTRY

        with _lock:
            if not self.registered:
                REGISTRY.register(self)
                self.registered = True


def _bound(le: float) -> str:
    return "+Inf" if le == float("inf") else repr(le)


class SharedSeries:
    """The three series of one ``method`` label value, in prometheus_client's per-process files."""

    __slots__ = ("calls", "failures", "duration")

    def __init__(self, calls: Any, failures: Any, duration: Any) -> None:
        self.calls, self.failures, self.duration = calls, failures, duration

    def record(self, seconds: float, failed: bool) -> None:
        self.calls.inc()
        if failed:
            self.failures.inc()
        self.duration.observe(seconds)

    #: Recorded at once: a scrape reads every worker's files, and another worker's tally would not be in them yet.
    tally = record


class SharedCallMetrics:
    """The metric families in prometheus_client's multiprocess mode, summed over workers at a scrape."""

    def __init__(self) -> None:
        from prometheus_client import Counter, Histogram

        self.calls: Counter = Counter("function_calls", "Number of calls processed.", ["method"])
        self.failures: Counter = Counter("function_failures", "Number of calls that failed (exception, 5xx or timeout).", ["method"])
        self.duration: Histogram = Histogram("function_duration_seconds", "Duration of calls in seconds.", ["method"], buckets=BUCKETS)
        self.series = {
            method: SharedSeries(self.calls.labels(method), self.failures.labels(method), self.duration.labels(method))
            for method in (*METHODS, OTHER_METHOD)
        }
        self.rejected: Counter = Counter("function_rejected", REJECTED_HELP)
        cancelled: Counter = Counter("function_cancelled", CANCELLED_HELP, ["cause"])
        self.cancellations = {cause: cancelled.labels(cause) for cause in CANCEL_CAUSES}
        self.queued: Histogram = Histogram(QUEUED_NAME, QUEUED_HELP, buckets=QUEUED_BUCKETS)
        self.spans_dropped: Counter | None = None  # a series only while spans are exported

    def count_dropped_spans(self) -> None:
        """Show ``function_spans_dropped`` (tracing is on)."""
        from prometheus_client import Counter

        if self.spans_dropped is None:
            self.spans_dropped = Counter(DROPPED_SPANS_NAME, DROPPED_SPANS_HELP)

    def dropped_spans(self, count: int) -> None:
        """``count`` spans could not be delivered to the trace collector."""
        if self.spans_dropped is not None:
            self.spans_dropped.inc(count)

    def reject(self) -> None:
        """A call the server refused with 503 (docs/servers.md#admission)."""
        self.rejected.inc()

    def cancelled(self, cause: str) -> None:
        """A call cancelled (``sdk.cancelled()``) for ``cause``: ``client`` or ``timeout``."""
        self.cancellations[cause].inc()

    def waited(self, seconds: float, calls: int = 1) -> None:
        """``calls`` calls waited ``seconds`` each to start."""
        for _ in range(calls):
            self.queued.observe(seconds)

    def before_collect(self, flush: Callable[[], None]) -> None:
        """Nothing: a scrape reads every worker's files, and ``flush`` runs on its own (at the loop's next tick)."""


CallMetrics = LocalCallMetrics | SharedCallMetrics


_metrics: CallMetrics | None = None
_lock = threading.Lock()


def call_metrics(config: Config) -> CallMetrics:
    """The process's metrics; the first call picks single- or multi-process mode."""
    global _metrics
    with _lock:
        if _metrics is None:
            # The values must be readable from another process when there are several
            # workers, or when the metrics port is served by the server's main process.
            if config.server_workers > 1 or config.server_metrics_port:
                use_multiprocess_dir()
                _metrics = SharedCallMetrics()
            else:
                _metrics = LocalCallMetrics()
        return _metrics
