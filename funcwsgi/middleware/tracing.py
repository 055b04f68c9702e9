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

import itertools
import logging
import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from .. import logs
from ..bodies import StreamedBody
from ..config import DEFAULT_PROPAGATORS, Config
from ..environ import REQUEST_ID_KEY, SPAN_ATTRIBUTES_KEY, SPAN_KEY
from ..errors import ConfigError
from ..handler.loader import LoadedFunction
from ..metrics.calls import call_metrics
from ..process import on_worker_start
from .span_export import span_processor

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment
    from opentelemetry.propagators.textmap import Getter, TextMapPropagator
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider

    from ..process import Service

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
    provider = TracerProvider(resource=hashed_once(resource))
    trace.set_tracer_provider(provider)
    # urllib3 carries every requests call too: one instrumentation covers both, and funcwsgi
    # depends on one contrib package only (two can lag each other's releases, which pip 23.2
    # cannot resolve around).
    URLLib3Instrumentor().instrument(tracer_provider=provider)
    endpoint = config.trace_collector_endpoint
    assert endpoint, "the tracing layer is built only when TRACE_COLLECTOR_ENDPOINT is set"
    dropped = None
    if config.server_metrics:
        metrics = call_metrics(config)
        metrics.count_dropped_spans()
        dropped = metrics.dropped_spans

    def export_from_this_worker(service: Service) -> None:
        provider.add_span_processor(span_processor(endpoint, dropped))

    on_worker_start(export_from_this_worker)
    logs.span_ids = span_ids
    quiet = CallersMalformedHeaders()
    for name in CALLER_TEXT_LOGGERS:
        logging.getLogger(name).addFilter(quiet)
    return provider


#: OpenTelemetry's loggers that warn of a malformed ``tracestate`` or ``baggage`` member, quoting it.
CALLER_TEXT_LOGGERS = ("opentelemetry.trace.span", "opentelemetry.baggage", "opentelemetry.baggage.propagation")


class CallersMalformedHeaders(logging.Filter):
    """OpenTelemetry's warnings of malformed propagation headers: at most one a minute, without the caller's text.

    OpenTelemetry warns once per malformed ``tracestate`` or ``baggage`` member and quotes it: any caller could write
    some 8 kB of log per request (a probe's tracestate of 7,500 bytes). The header is ignored either way (the call
    starts a trace of its own); the log says so once a minute, counting the rest, and never repeats what was sent.
    """

    def __init__(self, seconds: float = 60.0) -> None:
        super().__init__()
        self.burst = logs.OncePerBurst(logging.getLogger(CALLER_TEXT_LOGGERS[0]), seconds)

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno != logging.WARNING:
            return True
        unreported = self.burst.due()
        if unreported is None:
            return False
        record.msg = "A trace context or baggage header was malformed and was ignored (%d more since the last report; the text is not logged)"
        record.args = (unreported,)
        return True


def hashed_once(resource: Resource) -> Resource:
    """``resource``, hashed once rather than each time it is hashed.

    The OTLP exporter groups the spans of a batch by resource, hashing the
    resource of every span it encodes, and OpenTelemetry hashes a resource by
    writing its attributes out as JSON each time: some 50 Python lines per
    span, on every call when tracing is on. A resource's attributes never
    change (OpenTelemetry makes them immutable), so neither does its hash.
    """
    from opentelemetry.sdk.resources import Resource

    class HashedResource(Resource):
        def __init__(self, attributes: Any, schema_url: str | None = None) -> None:
            super().__init__(attributes, schema_url)
            self.hashed = super().__hash__()

        def __hash__(self) -> int:
            return self.hashed

    return HashedResource(resource.attributes, resource.schema_url)


def function_attributes(config: Config, loaded: LoadedFunction) -> dict[str, str]:
    """What every server span says of the function (``faas.name``, ``faas.version``), from ``FUNC_*``."""
    attributes = {"faas.name": config.func_name or loaded.name}
    if config.func_version:
        attributes["faas.version"] = config.func_version
    return attributes


def installed_propagators() -> dict[str, EntryPoint]:
    """The propagators installed packages register, by name (reads the packages' metadata)."""
    from importlib.metadata import entry_points

    return {point.name: point for point in entry_points(group=PROPAGATOR_GROUP)}


def check_propagators(names: tuple[str, ...], installed: Iterable[str] | None = None) -> None:
    """Refuse a name in ``OTEL_PROPAGATORS`` that no installed package registers, in one line.

    Done at start-up (:func:`funcwsgi.compat.resolve`), not while the settings
    are read: the lookup reads the installed packages' metadata. OpenTelemetry
    itself fails with a traceback on an unknown name when first imported.
    """
    if names == DEFAULT_PROPAGATORS:  # registered by funcwsgi's own dependencies
        return
    known = {*(installed_propagators() if installed is None else installed), "none"}
    for name in names:
        if name not in known:
            raise ConfigError(
                f"OTEL_PROPAGATORS={','.join(names)!r} is invalid: no propagator {name!r}; installed: {', '.join(sorted(known))}"
            )


def build_propagator(names: tuple[str, ...]) -> TextMapPropagator:
    """The composite of the named propagators (``none`` alone: propagate nothing)."""
    from opentelemetry.propagators.composite import CompositePropagator

    available = installed_propagators()
    check_propagators(names, available)  # a service made around a given callable skipped start-up's check
    return CompositePropagator([available[name].load()() for name in names if name != "none"])


def span_ids(environ: dict[str, Any]) -> tuple[str, str] | None:
    """(trace id, span id) for a log record: the active span, else the call's server span."""
    from opentelemetry import trace

    context = trace.get_current_span().get_span_context()
    if not context.is_valid:
        span = environ.get(SPAN_KEY)
        if span is None:
            return None
        context = span.get_span_context()
        if not context.is_valid:
            return None
    return format(context.trace_id, "032x"), format(context.span_id, "016x")


KNOWN_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "CONNECT", "TRACE"})


def header_key(name: str) -> str:
    """The environ key of a request header: ``traceparent`` -> ``HTTP_TRACEPARENT``."""
    return "HTTP_" + name.upper().replace("-", "_")


def environ_getter() -> Getter[WSGIEnvironment]:
    """A getter that reads propagation headers (``traceparent``, ``X-B3-TraceId``, ...) straight from the environ.

    Made when the tracing layer is built, so that OpenTelemetry is imported only when tracing is on.
    """
    from opentelemetry.propagators.textmap import Getter

    class EnvironGetter(Getter[dict[str, Any]]):  # the WSGI environ
        def __init__(self) -> None:
            self.keys_of: dict[str, str] = {}  # header name -> environ key, worked out once per name

        def environ_key(self, name: str) -> str:
            key = self.keys_of.get(name)
            if key is None:
                key = self.keys_of[name] = header_key(name)
            return key

        def get(self, carrier: WSGIEnvironment, key: str) -> list[str] | None:
            value = carrier.get(self.environ_key(key))
            return None if value is None else [value]

        def keys(self, carrier: WSGIEnvironment) -> list[str]:
            return [key[5:].lower().replace("_", "-") for key in carrier if key.startswith("HTTP_")]

    return EnvironGetter()


class TracingMiddleware:
    """One server span per call, continuing the caller's trace.

    Written for this one job rather than taken from
    ``opentelemetry-instrumentation-wsgi``, which collects every HTTP
    attribute the conventions name and records metrics of its own: with it
    tracing cost about 170 µs of CPU per call in-process, with this layer
    about 55 µs, the export's encoding included (docs/performance.md).
    """

    def __init__(self, app: WSGIApplication, provider: TracerProvider, function: dict[str, str] | None = None) -> None:
        from importlib.metadata import version

        from opentelemetry import context, propagate, trace
        from opentelemetry.trace import SpanKind, Status, StatusCode

        self.app = app
        # The installed distribution's version, not the package's __init__: importing that from a layer
        # would close an import circle (funcwsgi -> application -> stack -> this layer).
        self.tracer = provider.get_tracer("funcwsgi", version("funcwsgi"))
        self.getter = environ_getter()
        self.extract = propagate.extract
        # The environ keys of every header the configured propagators read: a call that
        # carries none of them starts a new trace without running the propagators.
        self.context_keys = tuple(header_key(name) for name in propagate.get_global_textmap().fields)
        self.attach, self.detach = context.attach, context.detach
        self.in_context = trace.set_span_in_context
        self.server = SpanKind.SERVER
        self.error = Status(StatusCode.ERROR)
        self.function = {"faas.trigger": "http", **(function or {})}
        self.calls = itertools.count()  # next() is atomic under the GIL: one call is the process's first

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        parent = None
        for key in self.context_keys:
            if key in environ:
                parent = self.extract(environ, getter=self.getter)
                break
        method = environ.get("REQUEST_METHOD", "")
        path = environ.get("PATH_INFO", "")
        # A few attributes only: each costs about 2 µs to record and encode, on every call.
        attributes = {"http.request.method": method, "url.path": path, **self.function}
        query = environ.get("QUERY_STRING")
        if query:
            attributes["url.query"] = query
        # OpenTelemetry's FaaS conventions: the invocation is the call its request id names.
        attributes["faas.invocation_id"] = environ.get(REQUEST_ID_KEY, "")
        attributes["faas.coldstart"] = next(self.calls) == 0
        triggered = environ.get(SPAN_ATTRIBUTES_KEY)  # a call another trigger than HTTP started
        if triggered is not None:
            attributes.update(triggered)
        name = f"{method} {path}" if method in KNOWN_METHODS else "HTTP"
        span = self.tracer.start_span(name, context=parent, kind=self.server, attributes=attributes)
        environ[SPAN_KEY] = span  # records made after the span ends (the access log) still carry its ids
        token = self.attach(self.in_context(span, parent))
        error = self.error

        def start_and_record(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            code = int(status[:3])
            span.set_attribute("http.response.status_code", code)
            if code >= 500:
                span.set_status(error)
            return start_response(status, headers, exc_info)

        try:
            body = self.app(environ, start_and_record)
        except BaseException as failure:
            span.record_exception(failure)
            span.set_attributes({"http.response.status_code": 500, "error.type": type(failure).__qualname__})  # the errors layer answers 500
            span.set_status(error)
            span.end()
            raise
        finally:
            self.detach(token)
        if type(body) is list:
            span.end()
            return body
        return SpanBody(body, span, error)

    def __repr__(self) -> str:
        return "TracingMiddleware()"


class SpanBody(StreamedBody):
    """A streamed body whose span ends when the server closes it."""

    __slots__ = ("_span", "_error")

    def __init__(self, body: Iterable[bytes], span: Any, error: Any) -> None:
        super().__init__(body)
        self._span = span
        self._error = error

    def failed(self, error: Exception) -> None:
        self._span.record_exception(error)
        self._span.set_status(self._error)

    def ended(self) -> None:
        self._span.end()
