"""Prometheus metrics of the calls, and the ``/metrics`` endpoint that serves them.

The names are the ones Kubeless and every Kyma Python runtime expose, so
existing dashboards keep working: ``function_calls_total``,
``function_failures_total`` and ``function_duration_seconds``, each labelled
``method``; ``function_rejected_total`` counts the calls the server refused
with 503 under overload (they never reached the function), and
``function_queueing_delay_seconds`` how long calls waited to start. With more than one worker process prometheus_client's
multiprocess mode is used: each worker writes its own files in a directory
made fresh when the server starts, and a scrape adds them up.
"""

from __future__ import annotations

import atexit
import glob
import itertools
import logging
import os
import shutil
import tempfile
import threading
from bisect import bisect_left
from collections.abc import Iterable, Iterator
from time import perf_counter
from typing import TYPE_CHECKING, Any, Protocol

from ..config import Config
from ..environ import FAILURE_KEY  # a failure another layer turned into a response (a 408)
from ..process import on_worker_exit
from ..replies import Reply
from .body import StatusNote, StreamedBody

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment
    from prometheus_client import Counter, Histogram

log = logging.getLogger("funcwsgi.metrics")

MULTIPROCESS_ENV = "PROMETHEUS_MULTIPROC_DIR"
METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
OTHER_METHOD = "other"  # any other method string: the label set stays bounded
CANCELLED_HELP = "Number of calls cancelled: their client left before the answer was complete (client), or they ran past SERVER_CALL_TIMEOUT (timeout)."
CANCEL_CAUSES = ("client", "timeout")
REJECTED_HELP = "Number of calls refused with 503 because they would have waited past SERVER_QUEUE_TARGET, or SERVER_MAX_INFLIGHT calls were in flight."
QUEUED_NAME = "function_queueing_delay_seconds"
QUEUED_HELP = "Seconds a call waited to start: for a thread, or behind the event loop (docs/servers.md#admission)."
#: Queueing delays: from a millisecond to past the longest sensible SERVER_QUEUE_TARGET (nodejs26/lib/metrics.js has the same).
QUEUED_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, float("inf"))
BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 180.0, float("inf"))


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


class LocalCallMetrics:
    """The call metrics of a single process, exposed through a collector at scrape time.

    prometheus_client is imported only when ``/metrics`` is first scraped, so
    a server starts without it.
    """

    def __init__(self) -> None:
        self.series = {method: LocalSeries() for method in (*METHODS, OTHER_METHOD)}
        self.registered = False
        self.rejected = 0
        self.rejected_lock = threading.Lock()
        self.cancellations = dict.fromkeys(CANCEL_CAUSES, 0)
        self.queued = LocalSeries(QUEUED_BUCKETS)

    def reject(self) -> None:
        """A call the server refused with 503 (docs/servers.md#admission)."""
        with self.rejected_lock:
            self.rejected += 1

    def cancelled(self, cause: str) -> None:
        """A call cancelled (``sdk.cancelled()``) for ``cause``: ``client`` or ``timeout``."""
        with self.rejected_lock:
            self.cancellations[cause] += 1

    def waited(self, seconds: float) -> None:
        """A call waited ``seconds`` to start."""
        queued = self.queued
        queued.lock.acquire()
        try:
            queued.calls += 1
            queued.seconds += seconds
            queued.buckets[bisect_left(QUEUED_BUCKETS, seconds)] += 1
        finally:
            queued.lock.release()

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily

        calls = CounterMetricFamily("function_calls", "Number of calls processed.", labels=["method"])
        failures = CounterMetricFamily("function_failures", "Number of calls that failed (exception, 5xx or timeout).", labels=["method"])
        duration = HistogramMetricFamily("function_duration_seconds", "Duration of calls in seconds.", labels=["method"])
        for method, series in self.series.items():
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

    def reject(self) -> None:
        """A call the server refused with 503 (docs/servers.md#admission)."""
        self.rejected.inc()

    def cancelled(self, cause: str) -> None:
        """A call cancelled (``sdk.cancelled()``) for ``cause``: ``client`` or ``timeout``."""
        self.cancellations[cause].inc()

    def waited(self, seconds: float) -> None:
        """A call waited ``seconds`` to start."""
        self.queued.observe(seconds)


CallMetrics = LocalCallMetrics | SharedCallMetrics


_metrics: CallMetrics | None = None
_multiprocess_dir: str | None = None
_lock = threading.Lock()


def call_metrics(config: Config) -> CallMetrics:
    """The process's metrics; the first call picks single- or multi-process mode."""
    global _metrics
    with _lock:
        if _metrics is None:
            # The values must be readable from another process when there are several
            # workers, or when the metrics port is served by the server's main process.
            if config.server_workers > 1 or config.server_metrics_port:
                _use_multiprocess_dir()
                _metrics = SharedCallMetrics()
            else:
                _metrics = LocalCallMetrics()
        return _metrics


def multiprocess_dir() -> str | None:
    return _multiprocess_dir


def _use_multiprocess_dir() -> None:
    """Point prometheus_client at a fresh directory before any metric value exists.

    prometheus_client reads the directory from the environment (the workers
    inherit it across fork), so this is the one place the runtime writes to
    ``os.environ``. A directory the operator named is emptied instead of made.
    """
    global _multiprocess_dir
    given = os.environ.get(MULTIPROCESS_ENV)
    if given:
        os.makedirs(given, exist_ok=True)
        for stale in glob.glob(os.path.join(given, "*.db")):
            os.remove(stale)
        path = given
    else:
        path = tempfile.mkdtemp(prefix="funcwsgi-metrics-")
        atexit.register(_remove_in, os.getpid(), path)
        os.environ[MULTIPROCESS_ENV] = path
    from prometheus_client import values

    # The value class is chosen when prometheus_client is imported, which the
    # function's own module may already have done: choose again.
    values.ValueClass = values.get_value_class()  # type: ignore[no-untyped-call]  # unannotated in prometheus_client
    _multiprocess_dir = path
    on_worker_exit(_forget_worker)
    log.debug("Metrics of all worker processes are collected in %s", path)


def _remove_in(owner: int, path: str) -> None:
    """Remove the directory at exit, in the process that made it (not in a forked worker)."""
    if os.getpid() == owner:
        shutil.rmtree(path, ignore_errors=True)


def _forget_worker(pid: int) -> None:
    """A worker ended: drop its live-gauge files. Its counter and histogram files stay,
    so the totals never go down (Prometheus would read a decrease as a reset)."""
    from prometheus_client import multiprocess

    if _multiprocess_dir is not None:
        multiprocess.mark_process_dead(pid, _multiprocess_dir)  # type: ignore[no-untyped-call]  # unannotated in prometheus_client


class CallRecorder(Protocol):
    """Records a finished call elsewhere too (:class:`~funcwsgi.middleware.faas_metrics.FaasMetrics`)."""

    def record(self, environ: WSGIEnvironment, seconds: float, failed: bool) -> None: ...


class MetricsMiddleware:
    """Counts each call, its failure, and its duration (to the end of a streamed body).

    ``faas``, when OTLP metrics are on, records the same call in OpenTelemetry's FaaS names
    (:mod:`funcwsgi.middleware.faas_metrics`).
    """

    def __init__(self, app: WSGIApplication, metrics: CallMetrics, faas: CallRecorder | None = None) -> None:
        self.app = app
        self.series = metrics.series
        self.other = metrics.series[OTHER_METHOD]
        self.faas = faas

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        series = self.series.get(environ.get("REQUEST_METHOD", ""), self.other)
        started = perf_counter()
        status = StatusNote(start_response)
        try:
            body = self.app(environ, status)
        except Exception:
            self.record(series, environ, perf_counter() - started, True)
            raise
        if type(body) is list:
            self.record(series, environ, perf_counter() - started, status.status[0] == "5" or FAILURE_KEY in environ)
            return body
        return MeasuredBody(body, self, series, environ, status, started)

    def record(self, series: LocalSeries | SharedSeries, environ: WSGIEnvironment, seconds: float, failed: bool) -> None:
        series.record(seconds, failed)
        if self.faas is not None:
            self.faas.record(environ, seconds, failed)

    def __repr__(self) -> str:
        return "MetricsMiddleware()"


class MeasuredBody(StreamedBody):
    """A streamed body whose call is recorded when the server closes it."""

    __slots__ = ("_layer", "_series", "_environ", "_status", "_started", "_failed")

    def __init__(
        self, body: Iterable[bytes], layer: MetricsMiddleware, series: LocalSeries | SharedSeries, environ: WSGIEnvironment, status: StatusNote, started: float
    ) -> None:
        super().__init__(body)
        self._layer = layer
        self._series = series
        self._environ = environ
        self._status = status
        self._started = started
        self._failed = False

    def failed(self, error: Exception) -> None:
        self._failed = True

    def ended(self) -> None:
        failed = self._failed or self._status.status[0] == "5" or FAILURE_KEY in self._environ
        self._layer.record(self._series, self._environ, perf_counter() - self._started, failed)


_own_collectors: list[Any] = []


def register_collector(collector: Any) -> None:
    """Serve ``collector``'s series (read at each scrape, in this process) next to the call metrics.

    For state only the serving process has, such as the Kafka trigger's lag.
    """
    from prometheus_client import REGISTRY

    with _lock:
        _own_collectors.append(collector)
    REGISTRY.register(collector)


class MetricsEndpoint:
    """``GET /metrics``: the Prometheus text exposition of this process, or of all workers."""

    def __init__(self, config: Config) -> None:
        self.metrics = call_metrics(config)  # the mode is chosen before the first scrape

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, generate_latest

        path = _multiprocess_dir
        if path is None:
            if isinstance(self.metrics, LocalCallMetrics):
                self.metrics.register()
            registry = REGISTRY
        else:
            from prometheus_client.multiprocess import MultiProcessCollector

            registry = CollectorRegistry()
            MultiProcessCollector(registry, path)  # type: ignore[no-untyped-call]  # unannotated in prometheus_client
            for collector in _own_collectors:
                registry.register(collector)
        return Reply(200, generate_latest(registry), content_type=CONTENT_TYPE_LATEST)(environ, start_response)

    def __repr__(self) -> str:
        return "MetricsEndpoint()"


def serve_metrics_port(config: Config) -> threading.Thread:
    """Serve ``SERVER_METRICS_PATH`` on ``SERVER_METRICS_PORT`` from a thread of this (the server's main) process.

    Only the metrics are there: any other path is 404, so the port can be
    exposed to a scraper without exposing the function. Raises
    :class:`~funcwsgi.errors.StartupError` when the port cannot be listened on.
    """
    import signal
    import socket
    from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

    from ..errors import StartupError

    endpoint = MetricsEndpoint(config)
    path = config.server_metrics_path
    not_found = Reply(404, "Not Found")

    def metrics_only(environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        if environ.get("PATH_INFO") == path and environ.get("REQUEST_METHOD") in ("GET", "HEAD"):
            return endpoint(environ, start_response)
        return not_found(environ, start_response)

    class Quiet(WSGIRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
            pass

    class Server(WSGIServer):
        address_family = socket.AF_INET6 if ":" in config.server_host else socket.AF_INET

    try:
        server = make_server(config.server_host, config.server_metrics_port, metrics_only, server_class=Server, handler_class=Quiet)
    except OSError as error:
        raise StartupError(
            f"cannot listen on SERVER_HOST={config.server_host!r} SERVER_METRICS_PORT={config.server_metrics_port}: {error.strerror}"
        ) from None

    def serve() -> None:
        # Stop signals are for the server's main thread; never let the kernel hand one to this one.
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT})
        server.serve_forever()

    thread = threading.Thread(target=serve, name="funcwsgi-metrics-port", daemon=True)
    thread.start()
    return thread
