"""The middleware stack, assembled in one place from one ordered list.

``LAYERS`` is read top to bottom from the outside in: the first entry sees the
request first and the response last. A layer whose ``enabled`` says no for the
configuration is left out entirely, so it costs nothing per call.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .config import Config
from .function_app import FunctionApp
from .loader import LoadedFunction
from .middleware import cors, tracing
from .middleware.access_log import AccessLogMiddleware
from .middleware.body_limit import BodyLimitMiddleware
from .middleware.cloudevents import CloudEventsMiddleware
from .middleware.errors import ErrorMiddleware
from .middleware.http_rules import HttpRulesMiddleware
from .middleware.health import Check, HealthCheck, hook_check
from .middleware.metrics import MetricsEndpoint, MetricsMiddleware, call_metrics
from .middleware.request_id import RequestIdMiddleware
from .middleware.reserved import ReservedRoutesMiddleware, default_routes
from .middleware.timeout import TimeoutMiddleware

if TYPE_CHECKING:
    from _typeshed.wsgi import WSGIApplication

log = logging.getLogger("funcwsgi")

Build = Callable[["WSGIApplication", Config, LoadedFunction], "WSGIApplication"]


def _always(config: Config) -> bool:
    return True


@dataclass(frozen=True)
class Layer:
    name: str
    build: Build
    enabled: Callable[[Config], bool] = _always

    def __repr__(self) -> str:
        return f"Layer({self.name!r})"


def reserved_routes(config: Config, loaded: LoadedFunction, inner: WSGIApplication) -> dict[str, WSGIApplication]:
    routes = default_routes()
    routes.update(health_routes(loaded, inner))
    if config.server_metrics and not config.server_metrics_port:  # else served on a port of its own
        routes[config.server_metrics_path] = MetricsEndpoint(config)
    return routes


def health_routes(loaded: LoadedFunction, inner: WSGIApplication) -> dict[str, WSGIApplication]:
    """The probes: the function's ``ready``/``alive`` hooks, plus what inner layers report.

    ``/healthz`` (Kyma's probe) answers like ``/health/liveness``; with no
    check at all both keep the fixed ``OK`` of :func:`default_routes`.
    """
    liveness: list[Check] = [layer.liveness_problem for layer in _layers_below(inner) if hasattr(layer, "liveness_problem")]
    readiness: list[Check] = []
    if "alive" in loaded.hooks:
        liveness.insert(0, hook_check(loaded.hooks["alive"], "alive", loaded.path))
    if "ready" in loaded.hooks:
        readiness.append(hook_check(loaded.hooks["ready"], "ready", loaded.path))
    routes: dict[str, WSGIApplication] = {"/health/readiness": HealthCheck(readiness), "/health/liveness": HealthCheck(liveness)}
    if liveness:
        routes["/healthz"] = routes["/health/liveness"]
    return routes


def _layers_below(app: WSGIApplication) -> list[object]:
    found: list[object] = []
    current: object | None = app
    while current is not None and len(found) < 50:
        found.append(current)
        current = getattr(current, "app", None)
    return found


def call_threads(config: Config) -> int:
    """Call threads the timeout layer may keep: one per server thread, and as many again for
    calls that timed out while blocked in C and have not returned yet."""
    return 2 * config.server_numthreads


LAYERS: list[Layer] = [
    Layer("http", lambda app, config, loaded: HttpRulesMiddleware(app)),
    Layer("errors", lambda app, config, loaded: ErrorMiddleware(app)),
    Layer("request-id", lambda app, config, loaded: RequestIdMiddleware(app)),
    Layer("access-log", lambda app, config, loaded: AccessLogMiddleware(app), lambda config: config.server_access_log),
    Layer("reserved-routes", lambda app, config, loaded: ReservedRoutesMiddleware(app, reserved_routes(config, loaded, app))),
    Layer(
        "cors",
        lambda app, config, loaded: cors.CorsMiddleware(
            app,
            origins=config.server_cors_origins,
            methods=config.server_cors_methods,
            headers=config.server_cors_headers,
            max_age=config.server_cors_max_age,
            credentials=config.server_cors_credentials,
        ),
        cors.enabled,
    ),
    Layer(
        "tracing",
        lambda app, config, loaded: tracing.TracingMiddleware(app, tracing.tracer_provider(config, loaded)),
        tracing.enabled,
    ),
    Layer("metrics", lambda app, config, loaded: MetricsMiddleware(app, call_metrics(config)), lambda config: config.server_metrics),
    Layer(
        "body-limit",
        lambda app, config, loaded: BodyLimitMiddleware(app, max_bytes=config.server_max_body_size),
        lambda config: config.server_max_body_size > 0,
    ),
    Layer(
        "timeout",
        lambda app, config, loaded: TimeoutMiddleware(app, seconds=config.server_call_timeout, max_threads=call_threads(config)),
        lambda config: config.server_call_timeout > 0,
    ),
    Layer("cloudevents", lambda app, config, loaded: CloudEventsMiddleware(app), lambda config: config.server_cloudevents),
]


def build_stack(config: Config, loaded: LoadedFunction, layers: list[Layer] | None = None) -> tuple[WSGIApplication, list[str]]:
    """(the WSGI app, the names of its layers from the outside in)."""
    chosen = [layer for layer in (LAYERS if layers is None else layers) if layer.enabled(config)]
    app: WSGIApplication = FunctionApp(loaded, config)
    for layer in reversed(chosen):
        app = layer.build(app, config, loaded)
    return app, [layer.name for layer in chosen] + ["function"]
