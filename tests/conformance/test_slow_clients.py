"""C14: slow and hostile clients: the six limits of docs/servers.md#slow-and-hostile-clients over raw sockets.

``SERVER_HEADER_TIMEOUT``, ``SERVER_BODY_TIMEOUT``, ``SERVER_SEND_TIMEOUT``,
``SERVER_KEEPALIVE_TIMEOUT``, ``SERVER_MAX_CONNECTIONS`` and
``SERVER_MAX_INFLIGHT``, each set small, observed as a client sees them: the
exact bytes of the runtime's own answers, when a connection is closed, and
whether quietly. Three launches side by side (the timeouts at one second;
the in-flight bound; the connection bound), and the timed clients of the
first all at once, so the module takes about three seconds per runtime.

funcwsgi's waitress, werkzeug and granian adapters do not keep these limits
whatever their settings (docs/servers.md#the-other-adapters, with the
measured figures); a runtime on one of them must say so at start-up, and
that warning is what each check verifies there instead.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor

import pytest

from .kit import Runtime, main_line, metric_total, serve_many, wait_for

#: The runtime's own answers, byte for byte (funcwsgi's funcwsgi/adapters/_requests.py Refusal).
REQUEST_TIMEOUT = (
    b"HTTP/1.1 408 Request Timeout\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 34\r\n"
    b"Connection: close\r\n\r\nthe request did not arrive in time"
)
OVERLOADED_TEXT = "the function is busy; retry later"
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
INFLIGHT = 3
CONNECTIONS = 4
#: Silent this long a connection may be closed for a new one at the connection limit (2 s on both
#: runtimes, longer than TCP's first retransmission timeout), plus the sweeps that find it.
QUIET = 2.75
#: funcwsgi's adapters without these limits, and the warning each prints at start-up instead.
WITHOUT_LIMITS = ("waitress", "werkzeug", "granian")
WARNING = "SERVER_ADAPTER={adapter} stops answering other callers, whatever its settings"


def adapter_without_limits(runtime: Runtime) -> str | None:
    adapter = runtime.launcher.env.get("SERVER_ADAPTER")
    return adapter if adapter in WITHOUT_LIMITS else None


@pytest.fixture(scope="module")
def launches(launcher) -> Iterator[dict[str, Runtime]]:
    with serve_many(launcher, {
        "timeouts": ("main", TIMEOUTS),
        "inflight": ("main", {"SERVER_MAX_INFLIGHT": str(INFLIGHT), "SERVER_NUMTHREADS": "8"}),
        "connections": ("main", {"SERVER_MAX_CONNECTIONS": str(CONNECTIONS), "SERVER_MAX_INFLIGHT": "0", "SERVER_NUMTHREADS": "8"}),
    }) as started:
        yield started


@pytest.fixture
def limited(launches) -> Callable[[str], Runtime | None]:
    """The launch named, or None after checking the start-up warning of an adapter that has no such limits."""

    def pick(name: str) -> Runtime | None:
        runtime = launches[name]
        adapter = adapter_without_limits(runtime)
        if adapter is None:
            return runtime
        wait_for(lambda: WARNING.format(adapter=adapter) in runtime.read_log(), 5, f"the start-up warning of SERVER_ADAPTER={adapter}", runtime.read_log)
        return None

    return pick


# -- raw-socket clients ------------------------------------------------------------------


def connect(runtime: Runtime, buffer: int | None = None) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if buffer is not None:  # before connecting, so the window stays this small
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, buffer)
    sock.settimeout(10)
    sock.connect(("127.0.0.1", runtime.process.port))
    return sock


def until_closed(sock: socket.socket, limit: float = 5.0) -> tuple[bytes, float]:
    """Everything the runtime sends until it closes the connection, and how long that took."""
    began = time.monotonic()
    sock.settimeout(limit)
    answer = b""
    try:
        while chunk := sock.recv(65536):
            answer += chunk
    except OSError:  # a reset, or the limit passed (then the time says so)
        pass
    return answer, time.monotonic() - began


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


def is_closed(sock: socket.socket) -> bool:
    sock.setblocking(False)
    try:
        return sock.recv(1, socket.MSG_PEEK) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def echo_request(size: int) -> bytes:
    return b"POST /echo HTTP/1.1\r\nHost: kit\r\nContent-Type: application/octet-stream\r\nContent-Length: %d\r\n\r\n" % size


# -- the timeouts: every timed client at once --------------------------------------------


def slow_head(runtime: Runtime) -> tuple[bytes, float]:
    with connect(runtime) as sock:
        sock.sendall(b"GET /hello HTTP/1.1\r\nHost: kit\r\n")
        return until_closed(sock)


def slow_next_head(runtime: Runtime) -> tuple[bytes, float]:
    with connect(runtime) as sock:
        assert one_answer(sock, b"GET /hello HTTP/1.1\r\nHost: kit\r\n\r\n").endswith(b"hello")
        sock.sendall(b"GET /hello HTTP/1.1\r\n")
        return until_closed(sock)


def silent(runtime: Runtime) -> tuple[bytes, float]:
    with connect(runtime) as sock:
        return until_closed(sock)


def idle_after_an_answer(runtime: Runtime) -> tuple[bytes, float]:
    with connect(runtime) as sock:
        first = one_answer(sock, b"GET /hello HTTP/1.1\r\nHost: kit\r\n\r\n")
        assert first.startswith(b"HTTP/1.1 200 "), first
        return until_closed(sock)


def stalled_body(runtime: Runtime) -> tuple[bytes, float]:
    with connect(runtime) as sock:
        sock.sendall(b"POST /size HTTP/1.1\r\nHost: kit\r\nContent-Length: 10\r\n\r\nab")
        return until_closed(sock)


def trickling_body(runtime: Runtime) -> tuple[bytes, bytes]:
    """Six bytes, one every 0.3 s (longer in all than the body timeout, never a pause as long), after 100-continue."""
    with connect(runtime) as sock:
        sock.sendall(b"POST /size HTTP/1.1\r\nHost: kit\r\nContent-Length: 6\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n")
        interim = sock.recv(100)
        for byte in b"abcdef":
            time.sleep(0.3)
            sock.sendall(bytes([byte]))
        return interim, until_closed(sock)[0]


def unread_response(runtime: Runtime) -> tuple[int, float]:
    """A large echo the client does not read for twice the send timeout: how much of it arrives afterwards."""
    with connect(runtime, CLIENT_BUFFER) as sock:
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
    with connect(runtime, CLIENT_BUFFER) as sock:
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


CLIENTS: dict[str, Callable[[Runtime], object]] = {
    "slow_head": slow_head,
    "slow_next_head": slow_next_head,
    "silent": silent,
    "idle_after_an_answer": idle_after_an_answer,
    "stalled_body": stalled_body,
    "trickling_body": trickling_body,
    "unread_response": unread_response,
    "slowly_read_response": slowly_read_response,
}


@pytest.fixture(scope="module")
def timed(launches) -> dict[str, Future[object]]:
    """Every timed client against the one-second launch, started together."""
    runtime = launches["timeouts"]
    pool = ThreadPoolExecutor(len(CLIENTS))
    futures = {name: pool.submit(client, runtime) for name, client in CLIENTS.items()}
    pool.shutdown(wait=False)
    return futures


def outcome(timed: dict[str, Future[object]], name: str) -> object:
    return timed[name].result(timeout=30)


def test_a_head_not_complete_within_the_header_timeout_gets_408_and_is_closed(limited, timed):
    """Mutation caught: node:http's own bare 408 (no body), or a close without an answer."""
    if limited("timeouts") is None:
        return
    answer, took = outcome(timed, "slow_head")
    assert answer == REQUEST_TIMEOUT
    assert EARLIEST < took < LATEST, f"{took:.2f} s"


def test_the_next_head_on_a_kept_alive_connection_has_the_header_timeout_too(limited, timed):
    """Mutation caught: node:http closing it quietly at the keep-alive timeout instead of answering 408."""
    if limited("timeouts") is None:
        return
    answer, took = outcome(timed, "slow_next_head")
    assert answer == REQUEST_TIMEOUT
    assert EARLIEST < took < LATEST, f"{took:.2f} s"


def test_a_connection_that_sends_nothing_is_closed_quietly_at_the_header_timeout(limited, timed):
    """A 408 there could be taken by the client for the answer to the request it is about to send."""
    if limited("timeouts") is None:
        return
    answer, took = outcome(timed, "silent")
    assert answer == b""
    assert EARLIEST < took < LATEST, f"{took:.2f} s"


def test_an_idle_keep_alive_connection_is_closed_quietly_after_the_keepalive_timeout(limited, timed):
    if limited("timeouts") is None:
        return
    rest, took = outcome(timed, "idle_after_an_answer")
    assert rest == b""
    assert EARLIEST < took < LATEST, f"{took:.2f} s"


def test_a_body_that_pauses_longer_than_the_body_timeout_gets_408_and_is_closed(limited, timed):
    if limited("timeouts") is None:
        return
    answer, took = outcome(timed, "stalled_body")
    assert answer == REQUEST_TIMEOUT
    assert EARLIEST < took < LATEST, f"{took:.2f} s"


def test_a_body_that_keeps_coming_is_read_whole_however_long_it_takes(limited, timed):
    """The body timeout bounds a pause, not the whole body (node:http's requestTimeout would be the whole)."""
    if limited("timeouts") is None:
        return
    interim, answer = outcome(timed, "trickling_body")
    assert interim == b"HTTP/1.1 100 Continue\r\n\r\n"
    assert answer.startswith(b"HTTP/1.1 200 ") and answer.endswith(b"\r\n\r\n6"), answer


def test_a_client_that_does_not_read_its_response_is_dropped_after_the_send_timeout(limited, timed):
    if limited("timeouts") is None:
        return
    received, took = outcome(timed, "unread_response")
    assert received < LARGE, f"the whole response ({received} bytes) waited two send timeouts for its client"
    assert took < LATEST, f"the rest took {took:.2f} s: the connection was not closed"


def test_a_client_that_reads_slowly_gets_its_whole_response(limited, timed):
    """The send timeout bounds a stall, not the whole response."""
    if limited("timeouts") is None:
        return
    received = outcome(timed, "slowly_read_response")
    assert received > LARGE, f"{received} bytes of a {LARGE}-byte echo and its head"


# -- the in-flight bound -----------------------------------------------------------------


def test_calls_past_the_inflight_bound_get_503_with_retry_after_and_are_counted(limited):
    """Mutation caught: counting the refused calls in function_calls_total as well, or refusing the probes."""
    runtime = limited("inflight")
    if runtime is None:
        return
    before = runtime.get("/metrics").text
    extra = 2
    with ThreadPoolExecutor(INFLIGHT + extra) as pool:
        calls = []
        for _ in range(INFLIGHT + extra):
            calls.append(pool.submit(runtime.get, "/sleep?seconds=1", timeout=10))
            time.sleep(0.02)
        time.sleep(0.1)
        probes = {path: runtime.get(path, timeout=5) for path in ("/healthz", "/health/readiness", "/metrics")}
        answers = [call.result() for call in calls]
    assert sorted(answer.status_code for answer in answers) == [200] * INFLIGHT + [503] * extra
    refused = [answer for answer in answers if answer.status_code == 503]
    for answer in refused:
        assert answer.text == OVERLOADED_TEXT
        assert answer.headers.get("Retry-After") == "1"
        assert answer.headers.get("Connection", "").lower() == "close"
    assert {path: answer.status_code for path, answer in probes.items()} == dict.fromkeys(probes, 200)
    after = runtime.get("/metrics").text
    assert metric_total(after, "function_rejected_total") == metric_total(before, "function_rejected_total") + extra
    admitted = metric_total(after, "function_calls_total", method="GET") - metric_total(before, "function_calls_total", method="GET")
    assert admitted == INFLIGHT, f"{admitted} calls counted: the refused ones never reached the function"
    assert runtime.get("/sleep?seconds=0").text == "slept", "the bound did not come back after the calls ended"


# -- the connection bound -----------------------------------------------------------------


def test_at_the_connection_limit_the_longest_waiting_connection_makes_room(limited):
    """node:http's own maxConnections would fail this: it drops the new connection instead."""
    runtime = limited("connections")
    if runtime is None:
        return
    idle = []
    try:
        for _ in range(CONNECTIONS):
            idle.append(connect(runtime))
            time.sleep(0.02)  # accepted in this order
        time.sleep(QUIET)  # silent this long, a connection may be closed for a new one
        assert runtime.get("/hello", timeout=5).text == "hello"
        wait_for(lambda: is_closed(idle[0]), 3, "the oldest idle connection closed")
        assert [is_closed(sock) for sock in idle] == [True] + [False] * (CONNECTIONS - 1), "more closed than the one needed, or not the oldest"
    finally:
        for sock in idle:
            sock.close()


def test_when_every_connection_is_busy_a_new_one_waits_and_is_answered_when_one_closes(limited):
    """No accepted connection is closed unanswered for being one too many: it waits as in the listen backlog."""
    runtime = limited("connections")
    if runtime is None:
        return
    before = metric_total(runtime.get("/metrics").text, "function_rejected_total")
    with ThreadPoolExecutor(CONNECTIONS) as pool:
        busy = [pool.submit(runtime.get, "/sleep?seconds=1.5", timeout=10, headers={"Connection": "close"}) for _ in range(CONNECTIONS)]
        time.sleep(0.5)
        assert not any(call.done() for call in busy)
        with connect(runtime) as sock:
            sock.sendall(b"GET /hello HTTP/1.1\r\nHost: kit\r\nConnection: close\r\n\r\n")
            answer, took = until_closed(sock)
        assert [call.result().text for call in busy] == ["slept"] * CONNECTIONS
    assert answer.startswith(b"HTTP/1.1 200 ") and answer.endswith(b"hello"), answer
    assert took > 0.5, f"answered after {took:.2f} s: it was not held while every connection had a call"
    assert metric_total(runtime.get("/metrics").text, "function_rejected_total") == before


# -- bad values ---------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "value", "expected"), [
    ("SERVER_HEADER_TIMEOUT", "0", "a positive number of seconds"),
    ("SERVER_MAX_INFLIGHT", "-1", "a non-negative integer"),
])
def test_a_bad_limit_is_one_line_naming_the_variable_and_exit_2(launcher, name, value, expected):
    exited = launcher.run_to_exit("main", {name: value})
    assert exited.status == 2
    assert main_line(exited.stderr).endswith(f"{name}={value!r} is invalid: expected {expected}")
