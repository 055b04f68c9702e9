"""Routes the runtime answers itself, without calling the function."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from ..replies import Reply

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

ROUTED_METHODS = frozenset({"GET", "HEAD"})

FAVICON = Reply(204)


def default_routes() -> dict[str, WSGIApplication]:
    """The fixed routes; the probes (``/healthz`` among them) come from ``funcwsgi.stack.health_routes``."""
    return {"/favicon.ico": FAVICON}


class ReservedRoutesMiddleware:
    """Answers ``GET``/``HEAD`` on the reserved paths; everything else reaches the function."""

    def __init__(self, app: WSGIApplication, routes: Mapping[str, WSGIApplication]) -> None:
        self.app = app
        self.routes = dict(routes)

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        if environ.get("REQUEST_METHOD") in ROUTED_METHODS:
            route = self.routes.get(environ.get("PATH_INFO", ""))
            if route is not None:
                return route(environ, start_response)
        return self.app(environ, start_response)

    def __repr__(self) -> str:
        return f"ReservedRoutesMiddleware({', '.join(self.routes)})"
