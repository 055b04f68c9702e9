"""A request id for every call: the caller's ``X-Request-Id``, else a new one."""

from __future__ import annotations

from collections.abc import Iterable
from random import getrandbits
from typing import TYPE_CHECKING, Any

from ..current import current_environ
from ..environ import REQUEST_ID_KEY
from ..serving import SERVER_CALL_KEY

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

HEADER = "X-Request-Id"
MAX_LENGTH = 128


def usable(request_id: str) -> bool:
    """Whether a caller's id can be echoed and logged as it is."""
    return 0 < len(request_id) <= MAX_LENGTH and request_id.isascii() and request_id.isprintable()



def new_request_id() -> str:
    """32 hex digits of 128 random bits: unique enough to find a call's log lines, with no system call.

    An id correlates, it guards nothing; ``random`` reseeds in each forked worker.
    """
    return getrandbits(128).to_bytes(16, "big").hex()

class RequestIdMiddleware:
    """Puts the call's id in ``environ['funcwsgi.request_id']`` and echoes it in the response.

    It also makes the environ the current one for the whole call, so every log
    record made inside it (the access log's included) carries the id.

    The id goes into every head the layers inside answer with. A server whose call takes the answer itself
    (:attr:`funcwsgi.serving.ServerCall.takes_answer`) adds it there, from the call's ``added`` fields; else
    the ``start_response`` the layers inside are given adds it.
    """

    def __init__(self, app: WSGIApplication) -> None:
        self.app = app

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        request_id = environ.get("HTTP_X_REQUEST_ID")
        if request_id is None or not usable(request_id):
            request_id = getrandbits(128).to_bytes(16, "big").hex()  # new_request_id(), inlined: most calls make one
        environ[REQUEST_ID_KEY] = request_id
        header = (HEADER, request_id)
        call = environ.get(SERVER_CALL_KEY)
        if call is not None and call.takes_answer:  # no start_response of our own (a closure made and called on every call)
            call.added += (header,)
            token = current_environ.set(environ)
            try:
                return self.app(environ, start_response)
            except BaseException:
                # The layers outside answer for the failure with their own fields (the errors layer's 500 quotes the id).
                call.added = tuple(field for field in call.added if field is not header)
                raise
            finally:
                current_environ.reset(token)

        def start_with_id(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            headers.append(header)
            return start_response(status, headers, exc_info)

        token = current_environ.set(environ)
        try:
            return self.app(environ, start_with_id)
        finally:
            current_environ.reset(token)

    def __repr__(self) -> str:
        return "RequestIdMiddleware()"
