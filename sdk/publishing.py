"""One POST that stops when its call is cancelled: the sdk's CloudEvent publish.

The wait for the answer is cut in slices of :data:`SLICE` seconds, and the
call's cancellation is asked between two, so a publish in flight stops within
a slice of its call's client leaving or timing out, on the publishing thread
itself (no thread is left blocked on a socket).
"""

from __future__ import annotations

import http.client
import select
import time
from collections.abc import Callable
from urllib.parse import SplitResult, urlsplit

#: Seconds between two looks at the call's cancellation while the answer is awaited.
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


def _post(url: SplitResult, body: bytes, headers: dict[str, str], timeout: float, cancelled: Callable[[], bool] | None) -> tuple[int, str]:
    deadline = time.monotonic() + timeout
    kind = http.client.HTTPSConnection if url.scheme == "https" else http.client.HTTPConnection
    connection = kind(url.hostname or "", url.port, timeout=timeout)
    try:
        connection.request("POST", (url.path or "/") + (f"?{url.query}" if url.query else ""), body, headers)
        sock = connection.sock
        assert sock is not None
        while not (getattr(sock, "pending", lambda: 0)() or select.select([sock], [], [], SLICE)[0]):
            if cancelled is not None and cancelled():
                raise Cancelled
            if time.monotonic() >= deadline:
                raise ReadTimeout(f"no answer within {timeout:g} s")
        sock.settimeout(max(deadline - time.monotonic(), SLICE))
        response = connection.getresponse()
        return response.status, response.read().decode("utf-8", "replace")
    finally:
        connection.close()
