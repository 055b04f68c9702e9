"""HTTP's rules for what a response may carry, kept whatever the function or the server does.

- A ``HEAD`` response has no body, also when the function streams one (a
  generator, an iterator, a WSGI app it passed through): servers send what
  the app yields, and bytes after a bodiless response break the connection's
  next request.
- ``1xx``, ``204`` and ``304`` responses have no body, no ``Content-Length``
  and no ``Content-Type`` (RFC 9110 sections 8.6 and 15.3.5).
- ``write()`` works on every server: where the server's ``start_response``
  returns none (some do), what the app writes is buffered and sent ahead of
  the body it returns (PEP 3333 allows a buffering ``write``).

The servers that keep these rules themselves (the edge worker's calls, and
the ASGI side in :mod:`funcwsgi.eventloop.asgi`) apply them with
:func:`answer_fields` where they take the response, and enter the stack below
this layer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from ..replies import BODILESS_CODES

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

CONTENT_HEADERS = frozenset({"content-length", "content-type"})


def without_content_headers(headers: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(name, value) for name, value in headers if name.lower() not in CONTENT_HEADERS]


def answer_fields(status: str, headers: list[tuple[str, str]], head: bool) -> tuple[list[tuple[str, str]], bool]:
    """The fields a response goes out with, and whether it goes without a body (``head``: the request was ``HEAD``).

    The one place the rules are applied: this layer, and the servers that keep them themselves (the edge, the ASGI side).
    """
    if status[:3] in BODILESS_CODES:  # bodiless(status), inlined: every answer passes here
        return without_content_headers(headers), True
    return headers, head


class HttpRulesMiddleware:
    """The outermost layer of :data:`funcwsgi.stack.LAYERS`: bodiless responses stay bodiless; ``write()`` always works."""

    def __init__(self, app: WSGIApplication) -> None:
        self.app = app

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        call = _Call(start_response, head=environ.get("REQUEST_METHOD") == "HEAD")
        body = self.app(environ, call.start_response)
        if call.bodiless or (call.status is None and call.head):
            return call.discard(body)
        if call.written is not None:
            return _WrittenFirst(call.written, body)
        return body

    def __repr__(self) -> str:
        return "HttpRulesMiddleware()"


class _Call:
    """One call's response as the layer sees it start."""

    def __init__(self, server_start: StartResponse, *, head: bool) -> None:
        self.server_start = server_start
        self.head = head
        self.status: str | None = None
        self.bodiless = False
        self.written: list[bytes] | None = None

    def start_response(self, status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Callable[[bytes], object]:
        self.status = status
        headers, self.bodiless = answer_fields(status, headers, self.head)
        # Typed to return write(), but some servers' start_response returns None.
        write: Any = self.server_start(status, headers, exc_info) if exc_info is not None else self.server_start(status, headers)
        if self.bodiless:
            return _ignore
        if callable(write):
            return write  # type: ignore[no-any-return]  # the server's write(), typed Any above
        self.written = []
        return self.written.append

    def started(self) -> bool:
        return self.status is not None

    def discard(self, body: Iterable[bytes]) -> list[bytes]:
        """Run the body only as far as it takes to start the response, then close it."""
        try:
            if not self.started():  # a generator app starts its response on first iteration
                for _ in body:
                    if self.started():
                        break
        finally:
            close = getattr(body, "close", None)
            if close is not None:
                close()
        return []


def _ignore(data: bytes) -> None:
    """``write()`` of a bodiless response: nothing to send."""


class _WrittenFirst:
    """The body, after what the app passed to a buffering ``write()`` (also while it iterates)."""

    def __init__(self, written: list[bytes], body: Iterable[bytes]) -> None:
        self.written = written
        self.body = body

    def __iter__(self) -> Iterator[bytes]:
        written = self.written
        for chunk in self.body:
            while written:
                yield written.pop(0)
            yield chunk
        while written:
            yield written.pop(0)

    def close(self) -> None:
        close = getattr(self.body, "close", None)
        if close is not None:
            close()
