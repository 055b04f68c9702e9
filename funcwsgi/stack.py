"""The middleware stack, declared as data in one ordered list and assembled in one place.

``LAYERS`` is read top to bottom from the outside in: the first entry sees the
request first and the response last. Each entry names its class and where each
of its options comes from (a setting, or a value made from the configuration
and the function), as starlette's ``Middleware(cls, **options)`` does; its
``repr`` shows them, and the start-up log line shows the options whose setting
differs from its default. A layer whose ``enabled`` says no for the
configuration is left out entirely, so it costs nothing per call.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from types import FunctionType, MappingProxyType
from typing import TYPE_CHECKING, Any, NamedTuple

from .config import Config, specs
from .eventloop.watch import LOOP_WATCH
from .handler.calling import FunctionApp
from .handler.loader import LoadedFunction
from .handler.signatures import Signature, is_async
from .metrics.calls import call_metrics
from .metrics.endpoint import MetricsEndpoint
from .middleware import cors, faas_metrics, tracing
from .middleware.access_log import AccessLogMiddleware
from .middleware.body_limit import BodyLimitMiddleware
from .middleware.call_metrics import MetricsMiddleware
from .middleware.cancellation import CancellationMiddleware
from .middleware.cloudevent_decoding import CloudEventsMiddleware
from .middleware.http2_requests import Http2RequestsMiddleware
from .middleware.http_rules import HttpRulesMiddleware
from .middleware.request_id import RequestIdMiddleware
from .middleware.reserved import LIVENESS_PATHS, READINESS_PATH, ReservedRoutesMiddleware, default_routes
from .middleware.server_errors import ErrorMiddleware
from .middleware.timeout import TimeoutMiddleware
from .probes.health import Check, HealthCheck, hook_check

if TYPE_CHECKING:
    from _typeshed.wsgi import WSGIApplication

log = logging.getLogger("funcwsgi")

#: The default of every setting, by field name: what the log line leaves out.
DEFAULTS: dict[str, Any] = {name: default for name, default, _ in specs()}
#: The environment variable of every setting, by field name: how a layer's repr names its options' sources.
ENV_NAMES: dict[str, str] = {name: spec.env for name, _, spec in specs()}


# Below, Made and Layer are NamedTuples, not frozen dataclasses: dataclasses compiles six generated methods for
# each at every start, about 4 million instructions a class; a NamedTuple costs a tenth of that (issue 44).
class Below(NamedTuple):
    """What a layer's made options see of the stack below it, built already (the stack is built inside out)."""

    #: The layer's inner app.
    app: WSGIApplication
    #: The liveness checks the layers below declare (:attr:`Layer.liveness`), innermost last.
    liveness: tuple[Check, ...] = ()


class Made(NamedTuple):
    """An option made at build time from the configuration, the function and the stack below the layer."""

    make: Callable[[Config, LoadedFunction, Below], Any]

    def __repr__(self) -> str:
        return f"<{getattr(self.make, '__name__', 'made')}>"


#: Where an option comes from: a setting (a :class:`Config` field name) or a :class:`Made` value.
Source = str | Made


def _always(config: Config) -> bool:
    return True


class Layer(NamedTuple):
    """One layer: its name in logs and docs, its class, and the sources of its options."""

    name: str
    cls: Callable[..., WSGIApplication]
    options: Mapping[str, Source] = MappingProxyType({})
    enabled: Callable[[Config], bool] = _always
    #: The liveness check the layer declares, made of the built layer (``TimeoutMiddleware.liveness_problem``):
    #: ``/healthz`` and ``/health/liveness`` run it. Declared here, so the probes never go looking for checks.
    liveness: Callable[[Any], str | None] | None = None
    #: The :class:`~funcwsgi.serving.ServerCall` attribute by which a server says it does this layer's whole work itself
    #: for every call it serves (``checks_http2``): :func:`served_stack` leaves the layer out of what that server calls.
    done_by_server: str | None = None

    def build(self, below: Below, config: Config, loaded: LoadedFunction) -> WSGIApplication:
        values = {
            option: source.make(config, loaded, below) if isinstance(source, Made) else getattr(config, source)
            for option, source in self.options.items()
        }
        return self.cls(called(below.app), **values)

    def check_of(self, built: WSGIApplication) -> Check | None:
        """The liveness check this layer declares, bound to ``built`` (this layer as built), or None."""
        return None if self.liveness is None else partial(self.liveness, built)

    def describe(self, config: Config) -> str:
        """``name``, with the options whose setting differs from its default: ``body-limit(max_bytes=2048)``."""
        changed = [
            f"{option}={_shown(getattr(config, source))}"
            for option, source in self.options.items()
            if isinstance(source, str) and getattr(config, source) != DEFAULTS[source]
        ]
        return f"{self.name}({', '.join(changed)})" if changed else self.name

    def __repr__(self) -> str:
        options = "".join(
            f", {option}={ENV_NAMES[source] if isinstance(source, str) else repr(source)}" for option, source in self.options.items()
        )
        return f"Layer({self.name!r}, {getattr(self.cls, '__name__', self.cls)}{options})"


def called(app: WSGIApplication) -> WSGIApplication:
    """What a layer is given to call for ``app``: its bound ``__call__``, when its class defines one in Python.

    CPython runs a call of a bound Python method inline, in the caller's C frame; calling the object goes
    through its type's call slot, one C recursion per layer. On the event loop a call's greenlet copies its
    whole C stack at every switch, so each recursion cost every call there about 3,000 instructions
    (docs/performance.md, issue 42).
    """
    own: Any = app  # typeshed's WSGIApplication is a Callable, which mypy sees no __call__ attribute on
    return own.__call__ if isinstance(type(own).__call__, FunctionType) else app


def served_stack(top: WSGIApplication, server_call: type) -> WSGIApplication:
    """What a server whose calls are ``server_call`` objects calls: the stack ``top`` without the layers whose work
    that server declares it does itself (:attr:`Layer.done_by_server`), each layer called inline (:func:`called`).

    The service's own stack is never changed (a process may serve it some other way too): a layer left out below
    the top is passed over by a copy of each layer above it, linked to what is below. Above the http2 layer that
    is the errors layer alone, which keeps nothing of its own.
    """
    done = tuple(layer.cls for layer in LAYERS if layer.done_by_server is not None and getattr(server_call, layer.done_by_server, False))
    chain: list[Any] = []
    layer: Any = top
    while hasattr(layer, "app"):  # the layers, from the outside in (the function's app has no inner app)
        chain.append(layer)
        layer = inner(layer)
    left_out = [index for index, layer in enumerate(chain) if type(layer) in done]
    if not left_out:
        return called(top)
    below: WSGIApplication = chain[left_out[-1]].app  # the inner app of the innermost layer left out: a bound __call__ already
    for layer in reversed(chain[: left_out[-1]]):
        if type(layer) not in done:
            linked = copy.copy(layer)
            linked.app = below
            below = called(linked)
    return below


def inner(layer: Any) -> Any:
    """The layer (or the function's app) inside ``layer``: the object whose ``__call__`` its ``app`` is."""
    app = layer.app
    return getattr(app, "__self__", app)


def _shown(value: Any) -> str:
    if isinstance(value, tuple):
        return ",".join(str(item) for item in value) or "''"
    return str(value)


def reserved_routes(config: Config, loaded: LoadedFunction, below: Below) -> dict[str, WSGIApplication]:
    routes = default_routes()
    routes.update(health_routes(loaded, below.liveness, loop_watched=serves_on_loop(config, loaded) and config.server_loop_blocked_seconds > 0))
    if config.server_metrics and not config.server_metrics_port:  # else served on a port of its own
        routes[config.server_metrics_path] = MetricsEndpoint(config)
    return routes


def contract_routes(config: Config, loaded: LoadedFunction, below: Below) -> dict[str, WSGIApplication]:
    """The ``POST`` routes the function's platform contract answers itself (Fission's specialise calls).

    Answered above the body-limit layer, each keeps its bound: the same layer wraps it.
    """
    if config.server_max_body_size <= 0:
        return loaded.routes
    return {path: BodyLimitMiddleware(route, max_bytes=config.server_max_body_size) for path, route in loaded.routes.items()}


def health_routes(loaded: LoadedFunction, declared: Sequence[Check] = (), *, loop_watched: bool = False) -> dict[str, WSGIApplication]:
    """The probes: the function's ``ready``/``alive`` hooks, plus the liveness checks the layers below declare.

    ``/healthz`` (Kyma's probe) answers like ``/health/liveness``, with no
    check at all too: every probe is answered by a :class:`HealthCheck`, so
    every probe answer is a ``probe_reply`` (never stored by a cache).
    """
    liveness: list[Check] = list(declared)
    readiness: list[Check] = []
    if loop_watched:
        liveness.append(LOOP_WATCH.liveness_problem)
    if "alive" in loaded.hooks:
        liveness.insert(0, hook_check(loaded.hooks["alive"], "alive", loaded.path))
    if "ready" in loaded.hooks:
        readiness.append(hook_check(loaded.hooks["ready"], "ready", loaded.path))
    alive = HealthCheck(liveness)
    return {READINESS_PATH: HealthCheck(readiness), **dict.fromkeys(LIVENESS_PATHS, alive)}


def serves_on_loop(config: Config, loaded: LoadedFunction) -> bool:
    """Whether an event-loop adapter serves this function: it is async (an ``async def`` function, an ASGI
    app, a Knative func-python instance's ``handle``), and SERVER_EVENT_LOOP is auto."""
    if config.server_event_loop != "auto":
        return False
    return loaded.signature is Signature.ASGI or is_async(loaded.function)


def call_threads(config: Config, loaded: LoadedFunction, below: Below) -> int:
    """Call threads the timeout layer may keep: one per server thread, and as many again for
    calls that timed out while blocked in C and have not returned yet."""
    return 2 * config.server_numthreads


def tracer_provider(config: Config, loaded: LoadedFunction, below: Below) -> Any:
    return tracing.tracer_provider(config, loaded)


def function_attributes(config: Config, loaded: LoadedFunction, below: Below) -> Any:
    return tracing.function_attributes(config, loaded)


def metrics_of_calls(config: Config, loaded: LoadedFunction, below: Below) -> Any:
    return call_metrics(config)


def cancellation_counter(config: Config, loaded: LoadedFunction, below: Below) -> Any:
    return call_metrics(config).cancelled if config.server_metrics else None


def faas_metrics_of_calls(config: Config, loaded: LoadedFunction, below: Below) -> Any:
    return faas_metrics.faas_metrics(config, loaded) if faas_metrics.enabled(config) else None


LAYERS: list[Layer] = [
    Layer("http", HttpRulesMiddleware, done_by_server="keeps_http_rules"),
    Layer("errors", ErrorMiddleware),
    Layer("http2", Http2RequestsMiddleware, {"max_body": "server_max_body_size"}, lambda config: config.http2, done_by_server="checks_http2"),
    Layer("request-id", RequestIdMiddleware),
    Layer("access-log", AccessLogMiddleware, enabled=lambda config: config.server_access_log),
    Layer("reserved-routes", ReservedRoutesMiddleware, {"routes": Made(reserved_routes), "posted": Made(contract_routes)}),
    Layer(
        "cors",
        cors.CorsMiddleware,
        {
            "origins": "server_cors_origins",
            "methods": "server_cors_methods",
            "headers": "server_cors_headers",
            "max_age": "server_cors_max_age",
            "credentials": "server_cors_credentials",
        },
        cors.enabled,
    ),
    Layer("tracing", tracing.TracingMiddleware, {"provider": Made(tracer_provider), "function": Made(function_attributes)}, tracing.enabled),
    Layer("metrics", MetricsMiddleware, {"metrics": Made(metrics_of_calls), "faas": Made(faas_metrics_of_calls)}, lambda config: config.server_metrics),
    Layer(
        "body-limit",
        BodyLimitMiddleware,
        {"max_bytes": "server_max_body_size"},
        lambda config: config.server_max_body_size > 0,
    ),
    Layer("cancellation", CancellationMiddleware, {"seconds": "server_call_timeout", "count": Made(cancellation_counter)}),
    Layer(
        "timeout",
        TimeoutMiddleware,
        {"seconds": "server_call_timeout", "max_threads": Made(call_threads)},
        lambda config: config.server_call_timeout > 0,
        liveness=TimeoutMiddleware.liveness_problem,
    ),
    Layer("cloudevents", CloudEventsMiddleware, enabled=lambda config: config.server_cloudevents),
]


def build_stack(config: Config, loaded: LoadedFunction, layers: list[Layer] | None = None) -> tuple[WSGIApplication, list[Layer]]:
    """(the WSGI app, the layers in it from the outside in)."""
    chosen = [layer for layer in (LAYERS if layers is None else layers) if layer.enabled(config)]
    app: WSGIApplication = FunctionApp(loaded, config)
    liveness: tuple[Check, ...] = ()
    for layer in reversed(chosen):
        app = layer.build(Below(app, liveness), config, loaded)
        check = layer.check_of(app)
        if check is not None:
            liveness = (check, *liveness)
    return app, chosen
