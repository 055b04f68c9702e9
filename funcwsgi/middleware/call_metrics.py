"""The metrics layer: counts each call, its failure and its duration (:mod:`funcwsgi.metrics`)."""

from __future__ import annotations

from collections.abc import Iterable
from time import perf_counter
from typing import TYPE_CHECKING, Any, Protocol

from ..bodies import StreamedBody
from ..environ import FAILURE_KEY  # a failure another layer turned into a response (a 408)
from ..metrics.calls import OTHER_METHOD, CallMetrics, CallSeries, SharedSeries
from ..serving import SERVER_CALL_KEY

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment


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
        noted: Any = environ.get(SERVER_CALL_KEY)  # what the call's status is read from when it ends
        if noted is not None and noted.takes_answer:  # the server's call keeps the status: no start_response of our own
            inner_start = start_response
        else:
            noted = status = Noted()

            def inner_start(status_line: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
                status.status = status_line
                return start_response(status_line, headers, exc_info)

        try:
            body = self.app(environ, inner_start)
        except Exception:
            self.record(series, environ, perf_counter() - started, True)
            raise
        if type(body) is list:
            seconds = perf_counter() - started
            line = noted.status
            failed = line is None or line[0] == "5" or FAILURE_KEY in environ
            series.tally(seconds, failed)  # record(), inlined for the commonest answer; tallied (CallSeries)
            if self.faas is not None:
                self.faas.record(environ, seconds, failed)
            return body
        return MeasuredBody(body, self, series, environ, noted, started)

    def record(self, series: CallSeries | SharedSeries, environ: WSGIEnvironment, seconds: float, failed: bool) -> None:
        series.record(seconds, failed)
        if self.faas is not None:
            self.faas.record(environ, seconds, failed)

    def __repr__(self) -> str:
        return "MetricsMiddleware()"


class Noted:
    """The status a call answered with, noted by the layer's own ``start_response`` (None: it answered none)."""

    __slots__ = ("status",)

    def __init__(self) -> None:
        self.status: str | None = None


class MeasuredBody(StreamedBody):
    """A streamed body whose call is recorded when the server closes it."""

    __slots__ = ("_layer", "_series", "_environ", "_status", "_started", "_failed")

    def __init__(
        self, body: Iterable[bytes], layer: MetricsMiddleware, series: CallSeries | SharedSeries, environ: WSGIEnvironment, status: Any, started: float
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
        line = self._status.status  # a Noted, or the server's call (ServerCall.takes_answer)
        failed = self._failed or line is None or line[0] == "5" or FAILURE_KEY in self._environ
        self._layer.record(self._series, self._environ, perf_counter() - self._started, failed)
