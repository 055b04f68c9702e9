"""One POST that stops when its call is cancelled: the sdk's CloudEvent publish.

Each wait (for the connection, for the proxy to take the body, for its
answer) is cut in slices of :data:`SLICE` seconds, and the call's
cancellation is asked between two, so a publish stops within a slice of its
call's client leaving or timing out, on the publishing thread itself (no
thread is left blocked on a socket). The name lookup and an HTTPS handshake
are not sliced: they are bounded by the publish timeout only.
"""

from __future__ import annotations

import errno
import http.client
import os
import select
import socket
import ssl
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import SplitResult, urlsplit

#: Seconds between two looks at the call's cancellation while the socket waits.
SLICE = 0.1


class Cancelled(Exception):
    """The call was cancelled while its POST was in flight."""


class ReadTimeout(TimeoutError):
    """No answer within the publish timeout."""


def post(address: str, body: bytes, headers: dict[str, str], timeout: float, cancelled: Callable[[], bool] | None) -> tuple[int, str]:
    """POST ``body`` to ``address``; (status, text of the answer). Raises :class:`Cancelled` once ``cancelled()`` says so."""
    url = urlsplit(address)
    if url.scheme not in ("http", "https") or not url.hostname:
        raise ValueError(f"expected an http:// or https:// URL, got {address!r}")
    from opentelemetry import propagate, trace

    if not trace.get_current_span().get_span_context().is_valid:  # tracing off: the caller's headers travel as they came
        return _post(url, body, headers, timeout, cancelled)
    # The client span an instrumented HTTP client would make: the proxy's side of the trace is its child.
    attributes: dict[str, str | int] = {
        "http.request.method": "POST", "url.full": address, "server.address": url.hostname, "server.port": url.port or 0,
    }
    with trace.get_tracer("sdk").start_as_current_span("POST", kind=trace.SpanKind.CLIENT, attributes=attributes) as span:
        propagate.inject(headers)
        status, text = _post(url, body, headers, timeout, cancelled)
        span.set_attribute("http.response.status_code", status)
        return status, text


class _Waits:
    """The waits of one POST, each sliced, all within one deadline."""

    def __init__(self, timeout: float, cancelled: Callable[[], bool] | None) -> None:
        self.timeout = timeout
        self.deadline = time.monotonic() + timeout
        self.cancelled = cancelled

    def until(self, sock: socket.socket, *, writable: bool) -> None:
        """Return once ``sock`` can be written (or read); raise :class:`Cancelled` or :class:`ReadTimeout` first if so."""
        while True:
            if not writable and getattr(sock, "pending", lambda: 0)():  # TLS holds decrypted bytes select cannot see
                return
            ready = select.select([], [sock], [], SLICE)[1] if writable else select.select([sock], [], [], SLICE)[0]
            if ready:
                return
            if self.cancelled is not None and self.cancelled():
                raise Cancelled
            if time.monotonic() >= self.deadline:
                raise ReadTimeout(f"no answer within {self.timeout:g} s")

    def left(self) -> float:
        return max(self.deadline - time.monotonic(), SLICE)


class _SlicedConnection(http.client.HTTPConnection):
    """A connection whose TCP connect and sends wait in slices (the connect its HTTPS subclass wraps in TLS)."""

    waits: _Waits

    def connect(self) -> None:
        self.sock = _connect(self.host, self.port, self.waits)

    def send(self, data: Any) -> None:
        if not isinstance(data, bytes | bytearray | memoryview):  # http.client also sends files and iterables
            super().send(data)
            return
        if self.sock is None:
            self.connect()
        sock = self.sock
        view = memoryview(data).cast("B")
        sock.setblocking(False)
        try:
            while view:
                self.waits.until(sock, writable=True)
                try:
                    view = view[sock.send(view) :]
                except (BlockingIOError, ssl.SSLWantWriteError, ssl.SSLWantReadError):
                    continue
        finally:
            sock.settimeout(self.waits.left())


class _SlicedHTTPSConnection(http.client.HTTPSConnection, _SlicedConnection):
    """HTTPS over the sliced connect: ``HTTPSConnection.connect`` wraps the socket ``_SlicedConnection.connect`` made."""


def _connect(host: str, port: int, waits: _Waits) -> socket.socket:
    error: OSError | None = None
    for family, kind, proto, _, address in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM):
        sock = socket.socket(family, kind, proto)
        try:
            sock.setblocking(False)
            code = sock.connect_ex(address)
            if code not in (0, errno.EINPROGRESS):
                raise OSError(code, os.strerror(code))
            waits.until(sock, writable=True)
            code = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            if code:
                raise OSError(code, os.strerror(code))
            sock.settimeout(waits.left())
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            return sock
        except OSError as failed:
            sock.close()
            error = failed
        except BaseException:
            sock.close()
            raise
    raise error or OSError(f"cannot resolve {host!r}")


def _post(url: SplitResult, body: bytes, headers: dict[str, str], timeout: float, cancelled: Callable[[], bool] | None) -> tuple[int, str]:
    waits = _Waits(timeout, cancelled)
    kind = _SlicedHTTPSConnection if url.scheme == "https" else _SlicedConnection
    connection = kind(url.hostname or "", url.port, timeout=timeout)
    connection.waits = waits
    try:
        connection.request("POST", (url.path or "/") + (f"?{url.query}" if url.query else ""), body, headers)
        sock = connection.sock
        assert sock is not None
        waits.until(sock, writable=False)
        sock.settimeout(waits.left())
        response = connection.getresponse()
        return response.status, response.read().decode("utf-8", "replace")
    finally:
        connection.close()
