"""Cross-origin calls from browsers (CORS), for the origins ``SERVER_CORS_ORIGINS`` lists."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ..config import TOKEN, Config
from ..replies import Reply

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

FORBIDDEN = Reply(403, "Forbidden: CORS preflight refused")
PREFLIGHT = Reply(204)


def enabled(config: Config) -> bool:
    return bool(config.server_cors_origins)


class CorsMiddleware:
    """Answers preflight ``OPTIONS`` itself and adds ``Access-Control-*`` headers to allowed calls.

    Calls without an ``Origin`` header, and calls from origins not allowed,
    pass through untouched (a browser then blocks the response). Every header
    value that does not depend on the request is built once, here.
    """

    def __init__(
        self,
        app: WSGIApplication,
        *,
        origins: Iterable[str],
        methods: Iterable[str],
        headers: Iterable[str],
        max_age: int,
        credentials: bool,
    ) -> None:
        self.app = app
        self.origins = frozenset(origins)
        self.any_origin = "*" in self.origins
        self.methods = frozenset(methods)
        self.any_header = "*" in set(headers)
        self.allow_headers = ", ".join(headers)
        shared: list[tuple[str, str]] = []
        if credentials:
            shared.append(("Access-Control-Allow-Credentials", "true"))
        # With a wildcard and no credentials the answer is the same for every origin.
        self.wildcard = self.any_origin and not credentials
        if not self.wildcard:
            shared.append(("Vary", "Origin"))
        self.simple_headers = shared + [("Access-Control-Expose-Headers", "X-Request-Id")]
        self.preflight_headers = shared + [
            ("Access-Control-Allow-Methods", ", ".join(methods)),
            ("Access-Control-Max-Age", str(max_age)),
        ]

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        origin = environ.get("HTTP_ORIGIN")
        if origin is None:
            return self.app(environ, start_response) if self.wildcard else self.app(environ, _varied(start_response))
        allowed = self.any_origin or origin in self.origins
        if environ.get("REQUEST_METHOD") == "OPTIONS" and "HTTP_ACCESS_CONTROL_REQUEST_METHOD" in environ:
            return self.preflight(origin, allowed, environ, start_response)
        if not allowed:
            return self.app(environ, _varied(start_response))
        added = [("Access-Control-Allow-Origin", "*" if self.wildcard else origin), *self.simple_headers]

        def start_with_cors(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            headers.extend(added)
            return start_response(status, headers, exc_info)

        return self.app(environ, start_with_cors)

    def preflight(self, origin: str, allowed: bool, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        method = environ["HTTP_ACCESS_CONTROL_REQUEST_METHOD"].upper()
        if not allowed or method not in self.methods:
            return FORBIDDEN(environ, start_response if self.wildcard else _varied(start_response))
        requested = environ.get("HTTP_ACCESS_CONTROL_REQUEST_HEADERS")
        # With "*" the caller's own list is echoed: only when it is a list of header names,
        # so nothing else a caller sends can reach a response header.
        allow_headers = (requested if requested and _header_names(requested) else "") if self.any_header else self.allow_headers
        headers = [("Access-Control-Allow-Origin", "*" if self.wildcard else origin), *self.preflight_headers]
        if allow_headers:
            headers.append(("Access-Control-Allow-Headers", allow_headers))
        return PREFLIGHT.answer(environ, start_response, headers=headers)

    def __repr__(self) -> str:
        return f"CorsMiddleware({', '.join(sorted(self.origins))})"


def _varied(start_response: StartResponse) -> StartResponse:
    """``start_response`` adding ``Vary: Origin``: where the answer depends on the origin, every answer says so, the ones
    without CORS headers too, so that a cache never gives a browser's CORS call the answer it kept for a call without
    ``Origin`` (Fetch, "CORS protocol and HTTP caches")."""

    def start(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
        headers.append(("Vary", "Origin"))
        return start_response(status, headers, exc_info)

    return start


def _header_names(value: str) -> bool:
    return all(TOKEN.fullmatch(name.strip()) for name in value.split(","))
