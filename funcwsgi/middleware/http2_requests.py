"""HTTP/2 requests the server framed but did not check are refused before the function runs.

RFC 9113 section 8.1.1 and 8.2 make a request malformed when its
``content-length`` disagrees with its DATA frames, when it carries a
connection-specific field (``connection``, ``keep-alive``,
``proxy-connection``, ``transfer-encoding``, ``upgrade``, ``te`` other than
``trailers``), or a field value with CR, LF or NUL or with whitespace at
either end; such a request must not be processed. A server may check some of
this itself and leave the rest (one refuses connection-specific fields and
CR/LF/NUL, but passes edge whitespace and hands the application an empty
body when the DATA frames contradict ``content-length``; docs/servers.md#http2
has each adapter's); this layer checks all of it on every adapter, so what a
function sees does not depend on which server framed the stream. A server
that checks all of it itself says so (:attr:`funcwsgi.serving.ServerCall.checks_http2`),
and its requests pass through untouched. Uppercase names and pseudo-header fields never
reach a WSGI environ, so the server's own checks are the only ones there.

It also joins the ``cookie`` fields an HTTP/2 client splits (section 8.2.3)
with ``; ``, as an HTTP/1.1 client sends them (a server that checks joins
them itself).

An HTTP/1.1 request costs one lookup: the server already parsed it by
HTTP/1.1's rules.
"""

from __future__ import annotations

import io
from collections.abc import Iterable
from typing import TYPE_CHECKING

from ..replies import MALFORMED_HTTP2
from ..serving import server_call

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

HTTP2 = "HTTP/2"
#: Fields only HTTP/1.1 connections have (RFC 9113 section 8.2.2), as environ keys.
CONNECTION_SPECIFIC = ("HTTP_CONNECTION", "HTTP_KEEP_ALIVE", "HTTP_PROXY_CONNECTION", "HTTP_TRANSFER_ENCODING", "HTTP_UPGRADE")
#: Never valid in a field value (RFC 9113 section 8.2.1).
FORBIDDEN = ("\r", "\n", "\0")
EDGE_WHITESPACE = " \t"



class Http2RequestsMiddleware:
    """Refuses malformed HTTP/2 requests with 400 and hands the function exactly the body the client sent."""

    def __init__(self, app: WSGIApplication, max_body: int) -> None:
        self.app = app
        self.max_body = max_body

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        if environ.get("SERVER_PROTOCOL") != HTTP2:
            return self.app(environ, start_response)
        call = server_call(environ)
        if call is not None and call.checks_http2:
            return self.app(environ, start_response)  # its server checked all of this as the stream came
        if not well_formed(environ) or not self.body_as_sent(environ):
            return MALFORMED_HTTP2(environ, start_response)
        cookie = environ.get("HTTP_COOKIE")
        if cookie is not None and ";" in cookie:
            environ["HTTP_COOKIE"] = "; ".join(part.strip(EDGE_WHITESPACE) for part in cookie.split(";"))
        return self.app(environ, start_response)

    def body_as_sent(self, environ: WSGIEnvironment) -> bool:
        """Whether the body arrived whole and as long as its ``content-length``; the function then reads a copy.

        A body announced over the body limit is left to the body-limit layer,
        which answers 413 without reading it; one without a ``content-length``
        gets the length it turned out to have, which that layer then checks.
        The body is read with one ``read()``: on a server whose
        ``read(size)`` never returns on a stream its client reset (see
        docs/servers.md#http2), reading in pieces would hold the call thread
        for good.
        """
        declared = environ.get("CONTENT_LENGTH")
        expected = None
        if declared:
            if not declared.isdigit():
                return False
            expected = int(declared)
            if self.max_body and expected > self.max_body:
                return True
        source = environ["wsgi.input"]
        body = source.read() if expected != 0 else b""
        if getattr(source, "interrupted", False) or (expected is not None and len(body) != expected):
            return False
        environ["wsgi.input"] = io.BytesIO(body)
        environ["CONTENT_LENGTH"] = str(len(body))
        return True

    def __repr__(self) -> str:
        return f"Http2RequestsMiddleware(max_body={self.max_body})"


def well_formed(environ: WSGIEnvironment) -> bool:
    """No connection-specific field, and every field value free of CR, LF, NUL and edge whitespace."""
    for key in CONNECTION_SPECIFIC:
        if key in environ:
            return False
    te = environ.get("HTTP_TE")
    if te is not None and te.strip(EDGE_WHITESPACE).lower() != "trailers":
        return False
    for key, value in environ.items():
        if key.startswith("HTTP_") or key in ("CONTENT_TYPE", "CONTENT_LENGTH"):
            if value and (value[0] in EDGE_WHITESPACE or value[-1] in EDGE_WHITESPACE or any(bad in value for bad in FORBIDDEN)):
                return False
    return True
