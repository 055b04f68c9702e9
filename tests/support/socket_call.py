"""A :class:`~funcwsgi.serving.ServerCall` for a call on a thread whose client is a real socket: the timeout tests' server.

Answering now is writing the response to the socket and shutting it for
writing, as a server that hands its socket over would: the function's own
response, when its thread comes back, then fails on the shut socket. The
runtime's own server (the edge worker) answers through its event loop
instead (funcwsgi/adapters/gunicorn/calls.py); the layers and tests that
need a server call without a server use this one.
"""

from __future__ import annotations

import select
import socket
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from funcwsgi.serving import THREAD, Lent


class Lender(Protocol):
    """The worker that lends the call its thread (and keeps more when calls are stuck)."""

    def call_stuck(self, key: Any, extra_threads: int) -> None: ...

    def call_back(self, key: Any, extra_threads: int) -> None: ...


class SocketCall:
    """A call on a thread, its client on ``sock``; ``key`` names the call to its ``lender``."""

    __slots__ = ("sock", "address", "lender", "key", "later")
    lent: Lent = THREAD
    answers_now = True
    checks_http2 = False
    keeps_http_rules = False
    takes_answer = False
    own_context = False

    def __init__(self, sock: Any, address: Any = None, lender: Lender | None = None, key: Any = None) -> None:
        self.sock = sock
        self.address = address  # None: asked of the socket when wanted
        self.lender = lender
        self.key = sock if key is None else key
        self.later: list[Callable[[], object]] | None = None

    def answer_now(self, status: str, headers: Sequence[tuple[str, str]], body: bytes) -> None:
        lines = [f"HTTP/1.1 {status}", *(f"{name}: {value}" for name, value in headers)]
        data = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body
        sock = self.sock
        if type(sock) is socket.socket:
            # Never block the caller (the watchdog) on a client that does not read: the answer is small.
            sock.send(data, socket.MSG_DONTWAIT)
        else:  # a socket of the worker's own, which never blocks (or a TLS socket, which takes no flags)
            sock.send(data)
        sock.shutdown(socket.SHUT_WR)

    def client_connected(self) -> bool:
        # A client that only shut its sending side reads as gone too; nginx counts it so (its 499).
        # Polled first: a socket with a timeout (gunicorn's) waits for data before any recv(), flags or not.
        try:
            poller = select.poll()
            poller.register(self.sock.fileno(), select.POLLIN | select.POLLRDHUP)
            events = poller.poll(0)
        except (OSError, ValueError):
            return False
        if not events:
            return True
        if events[0][1] & (select.POLLHUP | select.POLLERR | select.POLLNVAL | select.POLLRDHUP):
            return False
        try:
            return bool(self.sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) != b"")
        except (BlockingIOError, InterruptedError):
            return True
        except (OSError, ValueError):
            return False

    def peer(self) -> tuple[str, int] | None:
        address = self.address
        if address is None:
            try:
                address = self.address = self.sock.getpeername()
            except (OSError, ValueError):
                return None
        if isinstance(address, tuple) and len(address) >= 2:
            return str(address[0]), int(address[1])
        return None

    def after_response(self, work: Callable[[], object]) -> None:
        if self.later is None:
            self.later = []
        self.later.append(work)

    def thread_stuck(self, extra_threads: int) -> None:
        if self.lender is not None:
            self.lender.call_stuck(self.key, extra_threads)

    def thread_back(self, extra_threads: int) -> None:
        if self.lender is not None:
            self.lender.call_back(self.key, extra_threads)
