"""OpenTelemetry tracing of calls, exported over OTLP/HTTP to ``TRACE_COLLECTOR_ENDPOINT``.

The layer is present only when the endpoint is set. It continues the caller's
trace (``OTEL_PROPAGATORS``, by default W3C trace context, baggage and B3
multi-header, as Kyma sets them), makes one server span per call, and makes
spans from ``sdk.get_tracer()`` and from outgoing ``requests``/``urllib3``
calls children of it. Spans leave through a batch span processor created in
each worker process after fork (its thread and HTTP session must not be
shared across fork). The standard ``OTEL_*`` variables (sampler, exporter
headers and timeout, resource attributes, service name) keep working.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any

from .. import logs
from ..config import Config
from ..loader import LoadedFunction
from ..workers import on_worker_start

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment
    from opentelemetry.propagators.textmap import TextMapPropagator
    from opentelemetry.sdk.trace import TracerProvider

    from ..application import FunctionService

PROPAGATOR_GROUP = "opentelemetry_propagator"

_provider: TracerProvider | None = None
_lock = threading.Lock()


def enabled(config: Config) -> bool:
    return bool(config.trace_collector_endpoint)


def tracer_provider(config: Config, loaded: LoadedFunction) -> TracerProvider:
    """The process's tracer provider, set up once: resource, propagators, client instrumentation."""
    global _provider
    with _lock:
        if _provider is None:
            _provider = _set_up(config, loaded)
        return _provider


def _set_up(config: Config, loaded: LoadedFunction) -> TracerProvider:
    from opentelemetry import propagate, trace
    from opentelemetry.instrumentation.requests import RequestsInstrumentor
    from opentelemetry.instrumentation.urllib3 import URLLib3Instrumentor
    from opentelemetry.sdk.resources import OTELResourceDetector, Resource
    from opentelemetry.sdk.trace import TracerProvider

    propagate.set_global_textmap(build_propagator(config.otel_propagators))
    ours = {"service.name": config.func_name or loaded.name}
    if config.func_namespace:
        ours["service.namespace"] = config.func_namespace
        ours["k8s.namespace.name"] = config.func_namespace
    # OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES, when set, win over the function's metadata.
    resource = Resource.create({}).merge(Resource(ours)).merge(OTELResourceDetector().detect())
    provider = TracerProvider(resource=resource)
    trace.set_tracer_provider(provider)
    RequestsInstrumentor().instrument(tracer_provider=provider)
    URLLib3Instrumentor().instrument(tracer_provider=provider)
    endpoint = config.trace_collector_endpoint

    def export_from_this_worker(service: FunctionService) -> None:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint)))

    on_worker_start(export_from_this_worker)
    logs.span_ids = span_ids
    return provider


def build_propagator(names: tuple[str, ...]) -> TextMapPropagator:
    """The composite of the named propagators (``none`` alone: propagate nothing).

    The names were checked against the installed ones when the configuration was read.
    """
    from opentelemetry.propagators.composite import CompositePropagator

    available = {point.name: point for point in entry_points(group=PROPAGATOR_GROUP)}
    return CompositePropagator([available[name].load()() for name in names if name != "none"])


def span_ids(environ: dict[str, Any]) -> tuple[str, str] | None:
    """(trace id, span id) for a log record: the active span, else the call's server span."""
    from opentelemetry import trace

    context = trace.get_current_span().get_span_context()
    if not context.is_valid:
        span = environ.get(logs.SPAN_KEY)
        if span is None:
            return None
        context = span.get_span_context()
        if not context.is_valid:
            return None
    return format(context.trace_id, "032x"), format(context.span_id, "016x")


def _remember_span(span: Any, environ: WSGIEnvironment) -> None:
    # Records written after the span is no longer active (the access log) still carry its ids.
    environ[logs.SPAN_KEY] = span


class TracingMiddleware:
    """One server span per call, continuing the caller's trace (opentelemetry-instrumentation-wsgi)."""

    def __init__(self, app: WSGIApplication, provider: TracerProvider) -> None:
        from opentelemetry.instrumentation.wsgi import OpenTelemetryMiddleware

        self.app = app
        self.traced = OpenTelemetryMiddleware(app, request_hook=_remember_span, tracer_provider=provider)

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        return self.traced(environ, start_response)  # type: ignore[no-any-return]

    def __repr__(self) -> str:
        return "TracingMiddleware()"
