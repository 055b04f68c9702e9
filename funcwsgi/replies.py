"""The short answers the runtime makes itself: one object for all of them.

A :class:`Reply` is a status and a short text, encoded once: ``Content-Type:
text/plain``, ``Content-Length``, and no body for ``HEAD``. Like werkzeug's
``HTTPException`` it is itself a WSGI app, so a layer that must answer
(500, 408, 413, 400, a health probe, a CORS preflight, a reserved route) just
returns ``reply(environ, start_response)``.

Every refusal the runtime writes (its ``400``, ``408``, ``413``, ``431``,
``503``), from a layer, from a server's own loop or from the event loop, is
one of the objects at the end of this module: a layer returns it, a server
that writes to the socket itself sends :meth:`Reply.closing_wire`, and the
event loop sends :meth:`Reply.with_headers` ``("Connection", "close")``.
The platforms' own answers (funcwsgi/compat/) keep their platforms' words.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from http import HTTPStatus
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from _typeshed import OptExcInfo
    from _typeshed.wsgi import StartResponse, WSGIEnvironment

TEXT = "text/plain; charset=utf-8"
#: The 503's text when too many calls are in flight: on threads, on the event loop and in nodejs26 alike.
BUSY_TEXT = "the function is busy; retry later"

STATUS_LINES: dict[int, str] = {status.value: f"{status.value} {status.phrase}" for status in HTTPStatus}

#: Statuses whose responses never carry content: every ``1xx``, ``204`` and ``304``
#: (RFC 9110 section 6.4.1, RFC 9112 section 6.3). None is sent a ``Content-Length``
#: here either: RFC 9110 section 8.6 forbids it on ``1xx`` and ``204``, and on a
#: ``304`` it would have to be the length of a ``200`` the runtime never made.
BODILESS = frozenset({*range(100, 200), 204, 304})
#: The same, as the first three characters of a status line: what :func:`bodiless` looks up on every call.
BODILESS_CODES = frozenset(str(code) for code in BODILESS)

#: A probe's answer must never come from a cache (a proxy's, or the platform's own):
#: an old ``200`` would keep a dead process in service.
NO_STORE = (("Cache-Control", "no-store"),)


def bodiless(status: str) -> bool:
    """Whether a response with this status line (``"204 No Content"``) carries no content."""
    return status[:3] in BODILESS_CODES


def status_line(code: int) -> str:
    """``"404 Not Found"`` for 404; codes without a registered phrase are ``Unknown``."""
    line = STATUS_LINES.get(code)
    if line is None:
        line = STATUS_LINES[code] = f"{code} Unknown"
    return line


class Reply:
    """A fixed short answer, encoded once, callable as a WSGI app.

    ``text`` is the body (``str`` is sent as UTF-8); ``headers`` are added
    after the content headers. An empty body sends ``Content-Length: 0`` and no
    ``Content-Type``; 204 and 304 send neither.
    """

    __slots__ = ("status", "body", "headers")

    def __init__(
        self,
        code: int,
        text: str | bytes = b"",
        *,
        content_type: str = TEXT,
        headers: Sequence[tuple[str, str]] = (),
    ) -> None:
        self.status = status_line(code)
        self.body = text.encode() if isinstance(text, str) else bytes(text)
        own: list[tuple[str, str]] = []
        if self.body:
            own = [("Content-Type", content_type), ("Content-Length", str(len(self.body)))]
        elif code not in BODILESS:
            own = [("Content-Length", "0")]
        self.headers: tuple[tuple[str, str], ...] = (*own, *headers)

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        start_response(self.status, list(self.headers))
        return self.content(environ)

    def answer(
        self,
        environ: WSGIEnvironment,
        start_response: StartResponse,
        *,
        headers: Sequence[tuple[str, str]] = (),
        exc_info: OptExcInfo | None = None,
    ) -> Iterable[bytes]:
        """The reply with ``headers`` added for this call, replacing a started response when ``exc_info`` is given."""
        if exc_info is None:
            start_response(self.status, [*self.headers, *headers])
        else:
            start_response(self.status, [*self.headers, *headers], exc_info)
        return self.content(environ)

    def content(self, environ: WSGIEnvironment) -> list[bytes]:
        """The body to send: none for ``HEAD``."""
        return [self.body] if self.body and environ.get("REQUEST_METHOD") != "HEAD" else []

    def with_headers(self, *extra: tuple[str, str]) -> Reply:
        """The same reply with ``extra`` headers, encoded once more."""
        copy = Reply.__new__(Reply)
        copy.status, copy.body, copy.headers = self.status, self.body, (*self.headers, *extra)
        return copy

    def closing_wire(self) -> bytes:
        """The whole reply as HTTP/1.1 bytes that close the connection: what a server writes to a socket itself."""
        return self.http_head(("Connection", "close")) + self.body

    def http_head(self, *extra: tuple[str, str]) -> bytes:
        """The status line and headers as an HTTP/1.1 response head, for writing to a socket directly."""
        lines = [f"HTTP/1.1 {self.status}", *(f"{name}: {value}" for name, value in (*self.headers, *extra))]
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

    def __repr__(self) -> str:
        return f"Reply({self.status!r}, {self.body[:40]!r})"


def probe_reply(code: int, text: str) -> Reply:
    """The answer to a probe (``/healthz``, ``/health/readiness``, ``/health/liveness``): never stored by a cache.

    Every probe answer the runtime makes is one of these, whichever layer or
    adapter makes it, so none can leave the header out.
    """
    return Reply(code, text, headers=NO_STORE)


# -- the refusals: every 400, 408, 413, 431 and 503 the runtime writes, on every server and on the loop --

#: Seconds a client told to come back later should wait.
RETRY_AFTER_SECONDS = 1
#: Past ``SERVER_MAX_INFLIGHT`` or ``SERVER_QUEUE_TARGET``, and to a connection past ``SERVER_MAX_CONNECTIONS``.
BUSY = Reply(503, BUSY_TEXT, headers=[("Retry-After", str(RETRY_AFTER_SECONDS))])
#: A request whose head or body did not arrive in time (``SERVER_HEADER_TIMEOUT``, ``SERVER_BODY_TIMEOUT``).
REQUEST_TIMEOUT = Reply(408, "the request did not arrive in time")
#: A call the function did not finish within ``SERVER_CALL_TIMEOUT`` (the timeout layer, its watchdog, the loop).
CALL_TIMEOUT = Reply(408, "Timeout while processing the function")
#: A request line longer than a server reads.
URI_TOO_LONG = Reply(414, "the request line is too long")
#: A request head larger than a server reads.
HEAD_TOO_LARGE = Reply(431, "the request head is too large")
#: RFC 9112 sections 3, 5 and 6: a request whose target, fields or framing cannot be read one way only.
MALFORMED_REQUEST = Reply(400, "the request is malformed")
MALFORMED_FRAMING = Reply(400, "the request's Content-Length or Transfer-Encoding is malformed")
MISSING_HOST = Reply(400, "an HTTP/1.1 request needs exactly one Host field")
#: RFC 9112 section 3.2: a Host whose value is no ``uri-host [":" port]``. The edge closes the connection after it;
#: the http layer leaves that to the server (an app may not send a connection field): the answer is framed either way.
INVALID_HOST = Reply(400, "the request's Host field is not a host and port")
#: A chunked body a server refuses before a thread reads it.
MALFORMED_CHUNKS = Reply(400, "the chunked request body is malformed")
#: A chunked body the body-limit layer found malformed while the function read it.
MALFORMED_BODY = Reply(400, "Bad Request: the chunked request body is malformed")
#: An HTTP/2 request RFC 9113 section 8.1.1 calls malformed.
MALFORMED_HTTP2 = Reply(400, "the HTTP/2 request is malformed")
#: A transfer coding other than chunked (RFC 9112 section 6.1).
UNKNOWN_CODING = Reply(501, "the request's transfer coding is not supported")


def body_too_large(max_bytes: int) -> Reply:
    """The 413 for a body over ``SERVER_MAX_BODY_SIZE``; made once per limit, when the layer is built."""
    return Reply(413, f"Request Entity Too Large: the request body is larger than {max_bytes} bytes")


def bad_request(reason: str) -> Reply:
    """A 400 saying why (a malformed CloudEvent); ``reason`` is the runtime's own words, never an exception's."""
    return Reply(400, f"Bad Request: {reason}")
