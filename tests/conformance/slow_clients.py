"""The slow and hostile raw-socket clients of C14 (test_slow_clients.py), and the one-second limits they meet.

adapters/gunicorn/test_connections.py runs them too, against gunicorn's edge worker.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

from ..support.sockets import connect, one_answer, until_closed
from .kit import Runtime

#: The one-second limits, and when a one-second wait counts as kept (a sweep every 0.25 s, a loaded machine).
SECOND = 1.0
EARLIEST, LATEST = 0.9, 2.5
#: A response far larger than the kernel's buffers hold for a client that does not read, and within
#: what funcwsgi's worker queues for a slow client (its 16 MiB outbox; past that a write has the
#: send timeout as a whole, so a slow but steady reader of a larger answer is dropped there).
LARGE = 12 * 1024 * 1024
CLIENT_BUFFER = 65536
TIMEOUTS = {
    "SERVER_HEADER_TIMEOUT": "1",
    "SERVER_BODY_TIMEOUT": "1",
    "SERVER_SEND_TIMEOUT": "1",
    "SERVER_KEEPALIVE_TIMEOUT": "1",
    "SERVER_MAX_BODY_SIZE": str(2 * LARGE),
}


def echo_request(size: int) -> bytes:
    return b"POST /echo HTTP/1.1\r\nHost: kit\r\nContent-Type: application/octet-stream\r\nContent-Length: %d\r\n\r\n" % size


def sending(data: bytes) -> Callable[[Runtime], tuple[bytes, float]]:
    """A client that sends ``data`` and then nothing: all it gets until the runtime closes the connection, and when."""

    def client(runtime: Runtime) -> tuple[bytes, float]:
        with connect(runtime.process.port) as sock:
            if data:
                sock.sendall(data)
            return until_closed(sock)

    return client


slow_head = sending(b"GET /hello HTTP/1.1\r\nHost: kit\r\n")
silent = sending(b"")
stalled_body = sending(b"POST /size HTTP/1.1\r\nHost: kit\r\nContent-Length: 10\r\n\r\nab")


def slow_next_head(runtime: Runtime) -> tuple[bytes, float]:
    with connect(runtime.process.port) as sock:
        assert one_answer(sock, b"GET /hello HTTP/1.1\r\nHost: kit\r\n\r\n").endswith(b"hello")
        sock.sendall(b"GET /hello HTTP/1.1\r\n")
        return until_closed(sock)


def idle_after_an_answer(runtime: Runtime) -> tuple[bytes, float]:
    """Timed from before the request, as the other clients time from before their last byte.

    The server's idle time begins when it has written the answer, before the client has read it: timed
    from the read, a client that reads late (a loaded machine) saw the connection close "early".
    """
    with connect(runtime.process.port) as sock:
        began = time.monotonic()
        first = one_answer(sock, b"GET /hello HTTP/1.1\r\nHost: kit\r\n\r\n")
        assert first.startswith(b"HTTP/1.1 200 "), first
        rest, _ = until_closed(sock)
        return rest, time.monotonic() - began


def trickling_body(runtime: Runtime) -> tuple[bytes, bytes]:
    """Six bytes, one every 0.3 s (longer in all than the body timeout, never a pause as long), after 100-continue."""
    with connect(runtime.process.port) as sock:
        sock.sendall(b"POST /size HTTP/1.1\r\nHost: kit\r\nContent-Length: 6\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n")
        interim = sock.recv(100)
        for byte in b"abcdef":
            time.sleep(0.3)
            sock.sendall(bytes([byte]))
        return interim, until_closed(sock)[0]


def unread_response(runtime: Runtime) -> tuple[int, float]:
    """A large echo the client does not read for twice the send timeout: how much of it arrives afterwards."""
    with connect(runtime.process.port, buffer=CLIENT_BUFFER) as sock:
        sock.sendall(echo_request(LARGE) + b"x" * LARGE)
        time.sleep(2 * SECOND)
        began = time.monotonic()
        answer, _ = until_closed(sock, 10)
        return len(answer), time.monotonic() - began


def slowly_read_response(runtime: Runtime) -> int:
    """A large echo read 1 MiB every 0.25 s for 2.5 s (longer than the send timeout, never a pause as long), then at once.

    Not slower: a kernel wakes a writer only once about half its send buffer (up to 4 MiB) drained, so
    a reader of a few hundred KiB a second shows no progress for longer than one second to either runtime.
    """
    with connect(runtime.process.port, buffer=CLIENT_BUFFER) as sock:
        sock.sendall(echo_request(LARGE) + b"y" * LARGE)
        received = 0
        for _ in range(10):
            time.sleep(0.25)
            want = 1024 * 1024
            while want > 0:
                chunk = sock.recv(min(want, 65536))
                if not chunk:
                    return received
                received += len(chunk)
                want -= len(chunk)
        answer, _ = until_closed(sock, 10)
        return received + len(answer)


#: The timed clients, by name: every one is started at once against a launch with the one-second limits.
TIMED: dict[str, Callable[[Runtime], object]] = {
    "slow_head": slow_head,
    "slow_next_head": slow_next_head,
    "silent": silent,
    "idle_after_an_answer": idle_after_an_answer,
    "stalled_body": stalled_body,
    "trickling_body": trickling_body,
    "unread_response": unread_response,
    "slowly_read_response": slowly_read_response,
}


def one_more_while_all_are_busy(runtime: Runtime, connections: int) -> tuple[bytes, float]:
    """A call of 1.5 s on each of ``connections`` connections, and meanwhile one connection more: its answer, and how long it took."""
    with ThreadPoolExecutor(connections) as pool:
        busy = [pool.submit(runtime.get, "/sleep?seconds=1.5", timeout=10, headers={"Connection": "close"}) for _ in range(connections)]
        time.sleep(0.5)
        assert not any(call.done() for call in busy)
        with connect(runtime.process.port) as sock:
            sock.sendall(b"GET /hello HTTP/1.1\r\nHost: kit\r\nConnection: close\r\n\r\n")
            answer, took = until_closed(sock)
        assert [call.result().text for call in busy] == ["slept"] * connections
    return answer, took


def all_at_once(clients: dict[str, Callable[[Runtime], object]], runtime: Runtime) -> dict[str, Future[object]]:
    """Every client against ``runtime``, started together: their one-second waits overlap."""
    pool = ThreadPoolExecutor(len(clients))
    futures = {name: pool.submit(client, runtime) for name, client in clients.items()}
    pool.shutdown(wait=False)
    return futures


def outcome(timed: dict[str, Future[object]], name: str) -> object:
    return timed[name].result(timeout=30)
