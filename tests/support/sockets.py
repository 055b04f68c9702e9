"""Raw-socket clients: the bytes a server sends, when it closes, whether it closed quietly.

For what an HTTP client library hides (a 408 at a deadline, a connection closed
without an answer, a body that never ends). Standard library only (the
conformance kit uses it).
"""

from __future__ import annotations

import re
import socket
import time


def connect(port: int, host: str = "127.0.0.1", *, buffer: int | None = None, timeout: float = 10.0) -> socket.socket:
    """A connected TCP client; ``buffer`` sets its receive buffer before connecting, so the window stays that small."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    if buffer is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, buffer)
    sock.settimeout(timeout)
    sock.connect((host, port))
    return sock


def until_closed(sock: socket.socket, limit: float = 5.0) -> tuple[bytes, float]:
    """Everything the server sends until it closes the connection, and how long that took.

    Each read waits at most ``limit`` seconds; a reset or a read that waits
    longer ends it (then the time says so).
    """
    began = time.monotonic()
    sock.settimeout(limit)
    answer = b""
    try:
        while chunk := sock.recv(65536):
            answer += chunk
    except OSError:
        pass
    return answer, time.monotonic() - began


def sent_until_closed(port: int, data: bytes, limit: float = 5.0) -> tuple[bytes, float]:
    """Send ``data`` on a new connection, then :func:`until_closed`: what came back, and how long the server took to close."""
    with connect(port) as sock:
        sock.sendall(data)
        return until_closed(sock, limit)


def exchange(port: int, data: bytes, host: str = "127.0.0.1", timeout: float = 10.0) -> bytes:
    """Send ``data`` as it is on a new connection and read the answer until the server closes or goes quiet."""
    with connect(port, host, timeout=timeout) as sock:
        sock.sendall(data)
        return until_closed(sock, timeout)[0]


def is_closed(sock: socket.socket) -> bool:
    """Whether the server closed (or reset) the connection, without waiting and without reading its data."""
    sock.setblocking(False)
    try:
        return sock.recv(1, socket.MSG_PEEK) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def one_answer(sock: socket.socket, request: bytes) -> bytes:
    """Send a request and read its whole (Content-Length) answer, leaving the connection open."""
    sock.sendall(request)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, f"closed before an answer: {data!r}"
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:"))
    while len(body) < length:
        chunk = sock.recv(65536)
        assert chunk, f"closed within the body: {data!r}"
        body += chunk
    return head + b"\r\n\r\n" + body


def status_of(answer: bytes) -> int:
    """The status code of a raw HTTP/1 answer; 0 when the server closed without one."""
    match = re.match(rb"HTTP/1\.[01] (\d{3})", answer)
    return int(match.group(1)) if match else 0
