"""Refuse request bodies larger than ``SERVER_MAX_BODY_SIZE`` before the function runs."""

from __future__ import annotations

import tempfile
from collections.abc import Iterable
from typing import IO, TYPE_CHECKING

from ..bodies import ReleasingBody
from ..replies import MALFORMED_BODY, body_too_large

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

CHUNK = 64 * 1024
# A chunked body is kept in memory up to this size, then spills to a temporary file.
SPOOL_IN_MEMORY = 1024 * 1024
# Methods whose requests carry no body unless they say so with a header.
BODILESS_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "DELETE", "TRACE"})


class BodyLimitMiddleware:
    """Answers 413 when the body is larger than ``max_bytes``.

    A declared ``Content-Length`` is checked without reading anything. A body
    without one (``Transfer-Encoding: chunked``) is read up front, at most
    ``max_bytes + 1`` bytes, into a spooled file that the function then reads
    with an ordinary ``Content-Length``; so the function never runs on a
    body that turns out to be too large halfway through.
    """

    def __init__(self, app: WSGIApplication, *, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.too_large = body_too_large(max_bytes)

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        declared = environ.get("CONTENT_LENGTH")
        if declared:
            try:
                too_large = int(declared) > self.max_bytes
            except ValueError:
                too_large = False  # the server or the request parser answers for a malformed header
            if too_large:
                return self.too_large(environ, start_response)
        elif ("HTTP_TRANSFER_ENCODING" in environ and "chunked" in environ["HTTP_TRANSFER_ENCODING"].lower()) or (
            # A server that de-chunks a body may hide how it came; some servers mark every
            # request so, and reading an empty GET into a spooled file is half the cost
            # of the whole stack.
            environ.get("REQUEST_METHOD") not in BODILESS_METHODS and environ.get("wsgi.input_terminated")
        ):
            try:
                spooled = self.spool(environ)
            except (OSError, ValueError):
                # The server's de-chunking gave up on the body (werkzeug's on a malformed chunk, say):
                # the request is refused as RFC 9112 asks, not failed with a 500, and the function never runs.
                return MALFORMED_BODY(environ, start_response)
            if spooled is None:
                return self.too_large(environ, start_response)
            # The spool lives until the response is done with (a layer inside may still read it).
            try:
                return ReleasingBody(self.app(environ, start_response), spooled.close)
            except BaseException:
                spooled.close()
                raise
        return self.app(environ, start_response)

    def spool(self, environ: WSGIEnvironment) -> IO[bytes] | None:
        """Read the whole body into a spooled file (the new ``wsgi.input``); None if it exceeds the limit."""
        source = environ["wsgi.input"]
        spooled = tempfile.SpooledTemporaryFile(max_size=SPOOL_IN_MEMORY)
        total = 0
        while True:
            chunk = source.read(min(CHUNK, self.max_bytes + 1 - total))
            if not chunk:
                break
            total += len(chunk)
            if total > self.max_bytes:
                spooled.close()
                return None
            spooled.write(chunk)
        spooled.seek(0)
        environ["wsgi.input"] = spooled
        environ["CONTENT_LENGTH"] = str(total)
        return spooled

    def __repr__(self) -> str:
        return f"BodyLimitMiddleware(max_bytes={self.max_bytes})"
