"""The calls in OpenTelemetry's FaaS metric names, exported over OTLP/HTTP beside ``/metrics``.

``faas.invocations``, ``faas.invoke_duration`` (seconds), ``faas.errors``,
``faas.timeouts`` and ``faas.coldstarts`` (the first call a process serves),
each with ``faas.trigger`` (``http``, or what the trigger that started the
call put in the environ, such as ``pubsub`` for a message), as
the semantic conventions name them, so a vendor-neutral FaaS dashboard reads
them. The metrics layer records them with its Prometheus series; they leave
through a periodic reader (``OTEL_METRIC_EXPORT_INTERVAL``, default 60 s)
made in each worker process after fork, as the span exporter is, to
:meth:`Config.otlp_metrics_endpoint`. The function's name, version and
namespace are the resource's ``faas.name``, ``faas.version`` and
``service.*``.
"""

from __future__ import annotations

import itertools
import os
import socket
import threading
from typing import TYPE_CHECKING, Any

from ..config import Config
from ..environ import FAILURE_KEY, METRIC_ATTRIBUTES_KEY
from ..handler.loader import LoadedFunction
from ..metrics.calls import BUCKETS
from ..process import on_worker_start

if TYPE_CHECKING:
    from ..process import Service

HTTP = {"faas.trigger": "http"}


def enabled(config: Config) -> bool:
    return config.otlp_metrics_endpoint is not None


class FaasMetrics:
    """The FaaS instruments of this process, made when the worker starts; calls before that are not recorded."""

    def __init__(self) -> None:
        self.instruments: tuple[Any, Any, Any, Any, Any] | None = None
        self.calls = itertools.count()  # next() is atomic under the GIL: exactly one call is the first

    def record(self, environ: dict[str, Any], seconds: float, failed: bool) -> None:
        instruments = self.instruments
        if instruments is None:
            return
        invocations, duration, errors, timeouts, coldstarts = instruments
        trigger = environ.get(METRIC_ATTRIBUTES_KEY, HTTP)
        if next(self.calls) == 0:
            coldstarts.add(1, trigger)
        invocations.add(1, trigger)
        duration.record(seconds, trigger)
        if failed:
            errors.add(1, trigger)
        if environ.get(FAILURE_KEY) == "timeout":
            timeouts.add(1, trigger)


_metrics: FaasMetrics | None = None
_lock = threading.Lock()


def faas_metrics(config: Config, loaded: LoadedFunction) -> FaasMetrics:
    """The process's FaaS metrics; their exporter starts in each worker."""
    global _metrics
    with _lock:
        if _metrics is None:
            _metrics = FaasMetrics()
            made = _metrics
            endpoint = config.otlp_metrics_endpoint
            resource = _resource(config, loaded)

            def export_from_this_worker(service: Service) -> None:
                made.instruments = _instruments(endpoint, resource)
                made.calls = itertools.count()

            on_worker_start(export_from_this_worker)
        return _metrics


def _resource(config: Config, loaded: LoadedFunction) -> dict[str, str]:
    ours = {"service.name": config.func_name or loaded.name, "faas.name": config.func_name or loaded.name}
    if config.func_version:
        ours["faas.version"] = config.func_version
    if config.func_namespace:
        ours["service.namespace"] = config.func_namespace
        ours["k8s.namespace.name"] = config.func_namespace
    return ours


def _instruments(endpoint: str | None, ours: dict[str, str]) -> tuple[Any, Any, Any, Any, Any]:
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
    from opentelemetry.sdk.resources import OTELResourceDetector, Resource

    # Each worker exports cumulative series of its own: the instance id keeps them apart.
    ours = {**ours, "service.instance.id": f"{socket.gethostname()}-{os.getpid()}"}
    # OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES, when set, win over the function's metadata.
    resource = Resource.create({}).merge(Resource(ours)).merge(OTELResourceDetector().detect())
    reader = PeriodicExportingMetricReader(OTLPMetricExporter(endpoint=endpoint))
    meter = MeterProvider(resource=resource, metric_readers=[reader]).get_meter("funcwsgi")
    return (
        meter.create_counter("faas.invocations", "{invocation}", "Number of invocations of the function."),
        meter.create_histogram(
            "faas.invoke_duration", "s", "Duration of the function's invocations.", explicit_bucket_boundaries_advisory=list(BUCKETS[:-1])
        ),
        meter.create_counter("faas.errors", "{error}", "Number of invocation errors (exception, 5xx or timeout)."),
        meter.create_counter("faas.timeouts", "{timeout}", "Number of invocations that timed out."),
        meter.create_counter("faas.coldstarts", "{coldstart}", "Number of invocation cold starts: the first call a process serves."),
    )
