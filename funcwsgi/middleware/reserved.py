"""Routes the runtime answers itself, without calling the function."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from ..replies import Reply

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

ROUTED_METHODS = frozenset({"GET", "HEAD"})
POSTED_METHODS = frozenset({"POST"})

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
    """Answers ``GET``/``HEAD`` on the reserved paths, and ``POST`` on the contract's own; everything else reaches the function.

    ``posted`` are the routes a platform's contract answers itself
    (:attr:`~funcwsgi.handler.loader.LoadedFunction.routes`: Fission's
    specialise calls). They are not calls of the function: no layer below
    times, counts or traces them.
    """

    def __init__(self, app: WSGIApplication, routes: Mapping[str, WSGIApplication], posted: Mapping[str, WSGIApplication]) -> None:
        self.app = app
        self.routes = dict(routes)
        self.posted = dict(posted)
        # One lookup by path for every call: (the route, the methods it answers).
        self.answers = {path: (route, ROUTED_METHODS) for path, route in self.routes.items()}
        self.answers.update((path, (route, POSTED_METHODS)) for path, route in self.posted.items())

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        answer = self.answers.get(environ.get("PATH_INFO", ""))  # the path first: most calls stop at it
        if answer is not None and environ.get("REQUEST_METHOD") in answer[1]:
            return answer[0](environ, start_response)
        return self.app(environ, start_response)

    def __repr__(self) -> str:
        return f"ReservedRoutesMiddleware({', '.join([*self.routes, *(f'POST {path}' for path in self.posted)])})"
