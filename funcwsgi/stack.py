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
from .middleware.cloudevents import CloudEventsMiddleware
from .middleware.errors import ErrorMiddleware
from .middleware.metrics import MetricsEndpoint, MetricsMiddleware, call_metrics
from .middleware.request_id import RequestIdMiddleware
from .middleware.reserved import ReservedRoutesMiddleware, default_routes

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


def reserved_routes(config: Config, loaded: LoadedFunction) -> dict[str, WSGIApplication]:
    routes = default_routes()
    if config.server_metrics:
        routes[config.server_metrics_path] = MetricsEndpoint(config)
    return routes


LAYERS: list[Layer] = [
    Layer("errors", lambda app, config, loaded: ErrorMiddleware(app)),
    Layer("request-id", lambda app, config, loaded: RequestIdMiddleware(app)),
    Layer("access-log", lambda app, config, loaded: AccessLogMiddleware(app), lambda config: config.server_access_log),
    Layer("reserved-routes", lambda app, config, loaded: ReservedRoutesMiddleware(app, reserved_routes(config, loaded))),
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
    Layer("cloudevents", lambda app, config, loaded: CloudEventsMiddleware(app), lambda config: config.server_cloudevents),
]


def build_stack(config: Config, loaded: LoadedFunction, layers: list[Layer] | None = None) -> tuple[WSGIApplication, list[str]]:
    """(the WSGI app, the names of its layers from the outside in)."""
    chosen = [layer for layer in (LAYERS if layers is None else layers) if layer.enabled(config)]
    app: WSGIApplication = FunctionApp(loaded, config)
    for layer in reversed(chosen):
        app = layer.build(app, config, loaded)
    return app, [layer.name for layer in chosen] + ["function"]
