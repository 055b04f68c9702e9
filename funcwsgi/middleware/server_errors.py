"""No exception ever reaches the client or the server.

The second layer from the outside (:data:`funcwsgi.stack.LAYERS`): only the
HTTP rules layer (:mod:`.http_rules`) is around it, so its ``500`` is kept
bodiless for ``HEAD`` like every other answer. On the event-loop path, whose
edge keeps HTTP's rules itself, it is the outermost.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING

from ..bodies import StreamedBody
from ..environ import ERROR_KEY, REQUEST_ID_KEY
from ..logs import call_fields
from ..replies import Reply

if TYPE_CHECKING:
    from _typeshed import OptExcInfo
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

log = logging.getLogger("funcwsgi.errors")

INTERNAL_ERROR = Reply(500, "Internal Server Error")
#: The failure of a streamed body after its first chunk, logged by this layer: the server need not log it again.
STREAM_FAILURE_KEY = "funcwsgi.stream_failure"


class ErrorMiddleware:
    """Turns any exception into ``500 Internal Server Error`` and logs its traceback.

    The body is always exactly ``Internal Server Error``: nothing of the
    exception reaches the client. If the response had already started
    streaming when the error happened, the error is logged and re-raised so
    the server closes the connection instead of pretending the body is whole.
    """

    def __init__(self, app: WSGIApplication) -> None:
        self.app = app

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        try:
            body = self.app(environ, start_response)
        except Exception:
            return answer_failure(environ, start_response, sys.exc_info())
        if type(body) is list:
            return body
        guarded = GuardedBody(body, environ)
        if environ.get("REQUEST_METHOD") == "HEAD":
            return guarded  # HTTP's rules send nothing of it: it is not run
        try:
            guarded.take_first()
        except Exception:
            # Nothing of the answer went out: the function's failure, answered as any other.
            failure = sys.exc_info()
            try:
                guarded.close()  # the server never gets it: closed here, as PEP 3333 asks
            except Exception:
                log.debug("The failed body's close() raised too", exc_info=True)
            return answer_failure(environ, start_response, failure)
        return guarded

    def __repr__(self) -> str:
        return "ErrorMiddleware()"


def answer_failure(environ: WSGIEnvironment, start_response: StartResponse, failure: OptExcInfo) -> Iterable[bytes]:
    """The ``500`` of the function's ``failure``, logged once with its traceback, which the client never sees."""
    # For triggers that report the failure elsewhere (a dead-letter record).
    environ[ERROR_KEY] = failure[1]
    log_failure(environ, failure)
    request_id = environ.get(REQUEST_ID_KEY)
    # The caller quotes the request id when reporting the failure.
    headers = [] if request_id is None else [("X-Request-Id", request_id)]
    try:
        return INTERNAL_ERROR.answer(environ, start_response, headers=headers)
    except Exception:
        # Headers were already set by the inner app; exc_info asks the server
        # to replace them (it re-raises if they already reached the wire).
        return INTERNAL_ERROR.answer(environ, start_response, headers=headers, exc_info=failure)
    finally:
        del failure


def log_failure(environ: WSGIEnvironment, failure: OptExcInfo | bool = True, *, streaming: bool = False) -> None:
    method = environ.get("REQUEST_METHOD", "?")
    path = environ.get("SCRIPT_NAME", "") + environ.get("PATH_INFO", "")
    # The request-id layer sits inside this one: the call's context is gone by now.
    ids = call_fields(environ)
    if streaming:
        log.error("Function failed while streaming %s %s; closing the connection", method, path, exc_info=failure, extra=ids)
    else:
        log.error("Function failed on %s %s", method, path, exc_info=failure, extra=ids)


class GuardedBody(StreamedBody):
    """A streamed body whose failures are logged before they abort the connection.

    Its first chunk that is not empty is taken by the layer before the server
    has the body (:meth:`take_first`): until then nothing of the answer went out
    (PEP 3333 sends the head with it), so a failure there is answered ``500``
    like any other. The server gets that chunk first, then the rest.
    """

    __slots__ = ("_environ", "_first")

    def __init__(self, body: Iterable[bytes], environ: WSGIEnvironment) -> None:
        super().__init__(body)
        self._environ = environ
        self._first: bytes | None = None

    def take_first(self) -> None:
        """Run the body up to its first chunk that is not empty (or its end); what it raises is the caller's to answer."""
        iterator = self._iterator
        for chunk in iterator:
            if type(chunk) is not bytes and not isinstance(chunk, (bytes, bytearray, memoryview)):
                raise TypeError(f"a response body's chunk is a {type(chunk).__name__}, not bytes (PEP 3333)")
            if chunk:
                self.sent(chunk)
                self._first = chunk
                return

    def __next__(self) -> bytes:
        first = self._first
        if first is not None:
            self._first = None
            return first
        return StreamedBody.__next__(self)

    def failed(self, error: Exception) -> None:
        # The server closes the connection: one record of the function's failure, which it will not repeat.
        self._environ[STREAM_FAILURE_KEY] = error
        log_failure(self._environ, streaming=True)


def failure_logged(environ: WSGIEnvironment, error: BaseException) -> bool:
    """Whether ``error``, which a streamed body raised to its server, is the function's failure this layer logged already."""
    return environ.get(STREAM_FAILURE_KEY) is error
