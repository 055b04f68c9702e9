"""One access-log record per call, written when the response is complete."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from time import perf_counter
from typing import TYPE_CHECKING

from .. import logs
from ..bodies import StatusNote, StreamedBody
from .server_errors import INTERNAL_ERROR

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

log = logging.getLogger("funcwsgi.access")


class AccessLogMiddleware:
    """Logs ``method``, ``path``, ``status``, ``duration_ms`` and ``bytes`` of each call.

    A streamed body is logged when the server closes it, so its duration and
    size are the whole response's. An exception on its way to the errors layer
    is logged as the ``500`` that layer answers.
    """

    def __init__(self, app: WSGIApplication, logger: logging.Logger = log) -> None:
        self.app = app
        self.log = logger
        self.direct = logs.direct_writer(logger)

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        started = perf_counter()
        status = StatusNote(start_response)
        try:
            body = self.app(environ, status)
        except Exception:
            # The errors layer answers for it: its 500 and its body (none for HEAD).
            size = 0 if environ.get("REQUEST_METHOD") == "HEAD" else len(INTERNAL_ERROR.body)
            self.write(environ, "500", started, size)
            raise
        if type(body) is list:
            self.write(environ, status.status, started, sum(map(len, body)))
            return body
        return LoggedBody(body, self, environ, status, started)

    def write(self, environ: WSGIEnvironment, status: str, started: float, size: int) -> None:
        logger = self.log
        if not logger.isEnabledFor(logging.INFO):
            return
        method = environ.get("REQUEST_METHOD", "")
        path = environ.get("SCRIPT_NAME", "") + environ.get("PATH_INFO", "")
        code = int(status[:3])
        extra = {
            "method": method,
            "path": path,
            "status": code,
            "duration_ms": round((perf_counter() - started) * 1000, 3),
            "bytes": size,
        }
        # A streamed body is logged when closed, after the call's context is gone:
        # its ids come from the environ.
        extra.update(logs.call_fields(environ))
        if self.direct is not None:
            self.direct.write(logger.name, f"{method} {path} {code}", extra)
            return
        # makeRecord + handle is what logger.info does, minus looking up the
        # caller's file and line (a stack walk per call) that no field shows.
        logger.handle(logger.makeRecord(logger.name, logging.INFO, __file__, 0, "%s %s %d", (method, path, code), None, extra=extra))

    def __repr__(self) -> str:
        return "AccessLogMiddleware()"


class LoggedBody(StreamedBody):
    """A streamed body that counts its bytes and logs the call when closed."""

    __slots__ = ("_layer", "_environ", "_status", "_started", "_size", "_failed_unsent")

    def __init__(self, body: Iterable[bytes], layer: AccessLogMiddleware, environ: WSGIEnvironment, status: StatusNote, started: float) -> None:
        super().__init__(body)
        self._layer = layer
        self._environ = environ
        self._status = status
        self._started = started
        self._size = 0
        self._failed_unsent = False

    def sent(self, chunk: bytes) -> None:
        self._size += len(chunk)

    def failed(self, error: Exception) -> None:
        # Failed before any byte of it: the errors layer answers 500 in place of the function's status.
        self._failed_unsent = self._size == 0

    def ended(self) -> None:
        status = "500" if self._failed_unsent else self._status.status
        self._layer.write(self._environ, status, self._started, self._size)
