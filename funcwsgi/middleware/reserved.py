"""Routes the runtime answers itself, without calling the function."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from ..replies import Reply

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

ROUTED_METHODS = frozenset({"GET", "HEAD"})

# The paths the runtime keeps for itself, declared here only (nodejs26/lib/health.js
# declares the same). The metrics path is a setting: ``SERVER_METRICS_PATH``.
#: The readiness probe: the function's ``ready()`` hook.
READINESS_PATH = "/health/readiness"
#: The liveness probe: the function's ``alive()`` hook.
LIVENESS_PATH = "/health/liveness"
#: Kyma's name for the liveness probe, answered alike.
KYMA_LIVENESS_PATH = "/healthz"
LIVENESS_PATHS = (LIVENESS_PATH, KYMA_LIVENESS_PATH)
#: Every probe: answered past every bound on calls, since a busy process is not a dead one.
PROBE_PATHS = frozenset({READINESS_PATH, *LIVENESS_PATHS})
FAVICON_PATH = "/favicon.ico"

FAVICON = Reply(204)


def default_routes() -> dict[str, WSGIApplication]:
    """The fixed routes; the probes come from ``funcwsgi.stack.health_routes``."""
    return {FAVICON_PATH: FAVICON}


class ReservedRoutesMiddleware:
    """Answers ``GET``/``HEAD`` on the reserved paths; everything else reaches the function."""

    def __init__(self, app: WSGIApplication, routes: Mapping[str, WSGIApplication]) -> None:
        self.app = app
        self.routes = dict(routes)

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        route = self.routes.get(environ.get("PATH_INFO", ""))  # the path first: most calls stop at it
        if route is not None and environ.get("REQUEST_METHOD") in ROUTED_METHODS:
            return route(environ, start_response)
        return self.app(environ, start_response)

    def __repr__(self) -> str:
        return f"ReservedRoutesMiddleware({', '.join(self.routes)})"
