"""One record through the WSGI application, and what came back."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..environ import ERROR_KEY

if TYPE_CHECKING:
    from _typeshed.wsgi import WSGIApplication

log = logging.getLogger("funcwsgi.kafka")

_SNIPPET = 300
#: Client errors that a retry can fix: the call timed out, or was throttled.
_RETRYABLE_CLIENT_ERRORS = frozenset({408, 429})


@dataclass(frozen=True)
class Outcome:
    """The response the application gave for one record."""

    status: int
    headers: list[tuple[str, str]]
    body: bytes
    error: str = ""  # why it failed, for the log and the dead-letter record

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    @property
    def retryable(self) -> bool:
        """A server error or a timeout may pass next time; a bad record never will."""
        return self.status >= 500 or self.status in _RETRYABLE_CLIENT_ERRORS or self.status < 200


def dispatch(app: WSGIApplication, environ: dict[str, Any]) -> Outcome:
    """Call ``app`` as a server would, read the whole body, and describe the result."""
    started: list[Any] = []
    written: list[bytes] = []

    def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
        if started and exc_info is None:
            raise AssertionError("start_response called twice without exc_info")
        started[:] = [status, headers]
        return written.append

    try:
        body_iter = app(environ, start_response)
        try:
            chunks = [bytes(chunk) for chunk in body_iter]
        finally:
            close = getattr(body_iter, "close", None)
            if close is not None:
                close()
    except Exception as error:  # a failure while streaming, past the error layer
        log.error("Function failed while producing its response", exc_info=True)
        return Outcome(500, [], b"", f"{type(error).__name__}: {error}")
    if not started:
        return Outcome(500, [], b"", "the application returned without starting a response")
    status_text, headers = started
    try:
        status = int(status_text.split(" ", 1)[0])
    except ValueError:
        return Outcome(500, [], b"", f"the application sent a malformed status {status_text!r}")
    body = b"".join(written) + b"".join(chunks)
    if 200 <= status < 300:
        return Outcome(status, headers, body)
    return Outcome(status, headers, body, describe_failure(status_text, body, environ.get(ERROR_KEY)))


def describe_failure(status_text: str, body: bytes, exception: BaseException | None) -> str:
    """``500 Internal Server Error: ZeroDivisionError: division by zero`` and the like."""
    if exception is not None:
        return f"{status_text}: {type(exception).__name__}: {exception}"
    snippet = body[:_SNIPPET].decode("utf-8", "replace").strip()
    return f"{status_text}: {snippet}" if snippet else status_text
