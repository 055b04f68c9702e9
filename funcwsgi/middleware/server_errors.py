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
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

log = logging.getLogger("funcwsgi.errors")

INTERNAL_ERROR = Reply(500, "Internal Server Error")


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
        except Exception as error:
            failure = sys.exc_info()
            # For triggers that report the failure elsewhere (a dead-letter record).
            environ[ERROR_KEY] = error
            log_failure(environ)
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
        if type(body) is list:
            return body
        return GuardedBody(body, environ)

    def __repr__(self) -> str:
        return "ErrorMiddleware()"


def log_failure(environ: WSGIEnvironment, *, streaming: bool = False) -> None:
    method = environ.get("REQUEST_METHOD", "?")
    path = environ.get("SCRIPT_NAME", "") + environ.get("PATH_INFO", "")
    # The request-id layer sits inside this one: the call's context is gone by now.
    ids = call_fields(environ)
    if streaming:
        log.error("Function failed while streaming %s %s; closing the connection", method, path, exc_info=True, extra=ids)
    else:
        log.error("Function failed on %s %s", method, path, exc_info=True, extra=ids)


class GuardedBody(StreamedBody):
    """A streamed body whose failures are logged before they abort the connection."""

    __slots__ = ("_environ",)

    def __init__(self, body: Iterable[bytes], environ: WSGIEnvironment) -> None:
        super().__init__(body)
        self._environ = environ

    def failed(self, error: Exception) -> None:
        log_failure(self._environ, streaming=True)
