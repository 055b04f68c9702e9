"""A request id for every call: the caller's ``X-Request-Id``, else a new one."""

from __future__ import annotations

import os
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



#: New ids are made this many at once: one ``getrandbits`` and one ``hex`` (with a space between two ids) for 256 of
#: them, where one id alone took about 2,000 instructions of its call (``python -m bench.edge_calls --count``).
IDS_AT_ONCE = 256
_ids: list[str] = []
#: The next of the ids made already (IndexError: none left): ``list.pop`` is atomic, with the GIL and without it.
_next_id = _ids.pop


def new_request_id() -> str:
    """32 hex digits of 128 random bits: unique enough to find a call's log lines, with no system call.

    An id correlates, it guards nothing; ``random`` reseeds in each forked worker, and a worker
    forgets the ids its parent made (:func:`_forget_ids`).
    """
    try:
        return _next_id()
    except IndexError:
        return more_ids()


def more_ids() -> str:
    """Make :data:`IDS_AT_ONCE` new ids: one is returned, the others kept for the next calls."""
    made = getrandbits(128 * IDS_AT_ONCE).to_bytes(16 * IDS_AT_ONCE, "big").hex(" ", 16).split()
    first = made.pop()
    _ids.extend(made)
    return first


def _forget_ids() -> None:
    """In a forked child: its parent's ids would be its siblings' too."""
    _ids.clear()


os.register_at_fork(after_in_child=_forget_ids)


class RequestIdMiddleware:
    """Puts the call's id in ``environ['funcwsgi.request_id']`` and echoes it in the response.

    It also makes the environ the current one for the whole call, so every log
    record made inside it (the access log's included) carries the id.

    The id goes into every head the layers inside answer with. A server whose call takes the answer itself
    (:attr:`funcwsgi.serving.ServerCall.takes_answer`) adds it there, as the call's ``also`` field; else
    the ``start_response`` the layers inside are given adds it.
    """

    def __init__(self, app: WSGIApplication) -> None:
        self.app = app

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        request_id = environ.get("HTTP_X_REQUEST_ID")
        if request_id is None or not usable(request_id):
            try:  # new_request_id(), inlined: most calls make one
                request_id = _next_id()
            except IndexError:
                request_id = more_ids()
        environ[REQUEST_ID_KEY] = request_id
        header = (HEADER, request_id)
        call = environ.get(SERVER_CALL_KEY)
        if call is not None and call.takes_answer:  # no start_response of our own (a closure made and called on every call)
            call.also = header
            token = current_environ.set(environ)
            try:
                return self.app(environ, start_response)
            except BaseException:
                # The layers outside answer for the failure with their own fields (the errors layer's 500 quotes the id).
                call.also = None
                raise
            finally:
                if not call.own_context:  # else the call's context ends with it: a reset would cost every call
                    current_environ.reset(token)

        def start_with_id(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            headers.append(header)
            return start_response(status, headers, exc_info)

        token = current_environ.set(environ)
        try:
            return self.app(environ, start_with_id)
        finally:
            if call is None or not call.own_context:
                current_environ.reset(token)

    def __repr__(self) -> str:
        return "RequestIdMiddleware()"
