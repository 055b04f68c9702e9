"""A WSGI server's side of a call, in-process: a ``start_response`` that keeps what it was given."""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable
from typing import Any

Headers = list[tuple[str, str]]


class StartResponse:
    """Records each ``start_response`` call (status, headers, exc_info) and what the app wrote.

    ``strict``: a second call without ``exc_info`` is refused, as gunicorn
    refuses it. ``write=False``: it returns no ``write`` callable, as a server
    that leaves it out would.
    """

    def __init__(self, *, strict: bool = False, write: bool = True) -> None:
        self.calls: list[tuple[str, Headers, Any]] = []
        self.written: list[bytes] = []
        self._strict = strict
        self._write = write

    def __call__(self, status: str, headers: Headers, exc_info: Any = None) -> Callable[[bytes], None] | None:
        if self._strict and self.calls and exc_info is None:
            raise AssertionError("Response headers already set!")  # what gunicorn says
        self.calls.append((status, headers, exc_info))
        return self.written.append if self._write else None

    @property
    def statuses(self) -> list[str]:
        return [status for status, _, _ in self.calls]

    @property
    def status(self) -> str | None:
        """The last status given, or None before any."""
        return self.calls[-1][0] if self.calls else None

    @property
    def headers(self) -> Headers:
        return self.calls[-1][1] if self.calls else []

    @property
    def exc_info(self) -> Any:
        return self.calls[-1][2] if self.calls else None


def drain(body: Iterable[bytes]) -> bytes:
    """The whole body, then its ``close()`` called as a server calls it."""
    try:
        return b"".join(body)
    finally:
        getattr(body, "close", lambda: None)()


def call(app: Callable[..., Iterable[bytes]], method: str = "GET", **environ: Any) -> tuple[str | None, dict[str, str], list[bytes], bytes, dict[str, Any]]:
    """One call of ``app`` with a bare GET-like environ plus ``environ``: (status, headers, what was written, body, the environ)."""
    start = StartResponse()
    base: dict[str, Any] = {"REQUEST_METHOD": method, "PATH_INFO": "/", "wsgi.input": io.BytesIO(b"")}
    base.update(environ)
    body = b"".join(app(base, start))
    return start.status, dict(start.headers), start.written, body, base
