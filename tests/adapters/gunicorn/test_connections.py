"""adapters/gunicorn/connections.py: the edge worker's slow-client limits, for an ``async def`` function.

An async function on ``funcwsgi serve`` (gunicorn, the HTTP edge worker), launched
as the conformance kit launches it (its ``funcwsgi-loop`` launcher, the
``python-async`` fixtures), with the limits at one second; raw-socket
clients, the timed ones all at once, so the module takes a few seconds.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future

import pytest

from funcwsgi.adapters.gunicorn.connections import SWEEP_SECONDS
from funcwsgi.replies import REQUEST_TIMEOUT
from funcwsgi.serving.admission import EVICT_AFTER

from ...conformance.kit import Runtime, serve_many
from ...conformance.launchers import local_launchers
from ...conformance.slow_clients import (
    EARLIEST,
    LARGE,
    LATEST,
    TIMED,
    TIMEOUTS,
    all_at_once,
    one_more_while_all_are_busy,
    outcome,
    sending,
)
from ...support.metrics import metric_total
from ...support.polling import wait_for
from ...support.sockets import connect, is_closed, until_closed

CONNECTIONS = 4
QUIET = EVICT_AFTER + SWEEP_SECONDS  # a silent connection may be closed for a new one


@pytest.fixture(scope="module")
def launches() -> Iterator[dict[str, Runtime]]:
    (loop,) = [launcher for launcher in local_launchers() if launcher.name == "funcwsgi-loop"]
    with serve_many(
        loop,
        {
            "timeouts": ("main", TIMEOUTS),
            "connections": ("main", {"SERVER_MAX_CONNECTIONS": str(CONNECTIONS), "SERVER_MAX_INFLIGHT": "0", "SERVER_CALL_TIMEOUT": "10"}),
        },
    ) as started:
        assert "HttpEdgeWorker" in started["timeouts"].process.stderr + started["timeouts"].read_log()
        yield started


def slow_next_head(runtime: Runtime) -> tuple[bytes, float]:
    with connect(runtime.process.port) as sock:
        sock.sendall(b"GET /hello HTTP/1.1\r\nHost: t\r\n\r\n")
        first = b""
        while not first.endswith(b"hello"):
            first += sock.recv(65536)
        time.sleep(0.5)  # half the keep-alive timeout: the next head's own deadline starts at its first byte
        sock.sendall(b"GET /hello HTTP/1.1\r\n")
        return until_closed(sock)


#: A request, and behind it in the same write one whose body stops: uvicorn starts its call once the first is answered.
pipelined_stalled_body = sending(b"GET /hello HTTP/1.1\r\nHost: t\r\n\r\nPOST /size HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\nab")


def trickling_body(runtime: Runtime) -> bytes:
    with connect(runtime.process.port) as sock:
        sock.sendall(b"POST /size HTTP/1.1\r\nHost: t\r\nContent-Length: 6\r\nConnection: close\r\n\r\n")
        for byte in b"abcdef":
            time.sleep(0.3)
            sock.sendall(bytes([byte]))
        return until_closed(sock)[0]


#: The kit's timed clients, with gunicorn's loop worker's own next-head, trickling and pipelined ones.
CLIENTS: dict[str, Callable[[Runtime], object]] = {
    **{name: TIMED[name] for name in ("slow_head", "silent", "stalled_body", "unread_response", "slowly_read_response")},
    "slow_next_head": slow_next_head,
    "pipelined_stalled_body": pipelined_stalled_body,
    "trickling_body": trickling_body,
}


@pytest.fixture(scope="module")
def timed(launches) -> dict[str, Future[object]]:
    return all_at_once(CLIENTS, launches["timeouts"])


@pytest.mark.parametrize("client", ["slow_head", "slow_next_head", "stalled_body"])
def test_a_request_not_complete_in_time_gets_the_threads_408_and_is_closed(timed, client):
    """Mutation caught: the 408 left out when the connection's previous cycle was answered (``slow_next_head``)."""
    answer, took = outcome(timed, client)
    assert answer == REQUEST_TIMEOUT.closing_wire()
    assert EARLIEST < took < LATEST, f"{took:.2f} s"


def test_a_pipelined_request_whose_body_stalls_gets_the_408_after_the_answer_before_it(timed):
    """Mutation caught: the pipelined call left untimed once uvicorn starts it (it held its connection for ever)."""
    answer, took = outcome(timed, "pipelined_stalled_body")
    assert answer.startswith(b"HTTP/1.1 200 ") and answer.endswith(b"\r\n\r\nhello" + REQUEST_TIMEOUT.closing_wire()), answer  # type: ignore[union-attr]
    assert EARLIEST < took < LATEST, f"{took:.2f} s"


def test_a_connection_that_sends_nothing_is_closed_quietly_at_the_header_timeout(timed):
    answer, took = outcome(timed, "silent")
    assert answer == b""
    assert EARLIEST < took < LATEST, f"{took:.2f} s"


def test_a_body_that_keeps_coming_is_read_whole(timed):
    """The body timeout bounds a pause, not the whole body."""
    answer = outcome(timed, "trickling_body")
    assert answer.startswith(b"HTTP/1.1 200 ") and answer.endswith(b"\r\n\r\n6"), answer  # type: ignore[union-attr]


def test_a_client_that_does_not_read_is_dropped_after_the_send_timeout(timed):
    received, took = outcome(timed, "unread_response")
    assert received < LARGE, f"the whole response ({received} bytes) waited two send timeouts for its client"
    assert took < LATEST, f"the rest took {took:.2f} s: the connection was not closed"


def test_a_client_that_reads_slowly_gets_its_whole_response(timed):
    """Mutation caught: a send timeout counted from the first stall instead of the last progress."""
    received = outcome(timed, "slowly_read_response")
    assert received > LARGE, f"{received} bytes of a {LARGE}-byte echo and its head"


def test_at_the_connection_limit_the_longest_waiting_connection_makes_room(launches):
    runtime = launches["connections"]
    idle = []
    try:
        for _ in range(2 * CONNECTIONS):
            idle.append(connect(runtime.process.port))
            time.sleep(0.02)  # accepted in this order
        assert runtime.get("/hello", timeout=5).text == "hello"
        # The held silent ones make room only once silent for EVICT_AFTER since their accept: what is judged
        # here is the order they go in, so the wait leaves a loaded machine's sweeps slack past that. Whether
        # the call's connection makes a fifth one go depends on whether its request is seen while it is held
        # (a held caller with a request is let in first), so only the oldest CONNECTIONS are counted.
        wait_for(lambda: all(is_closed(sock) for sock in idle[:CONNECTIONS]), EVICT_AFTER + 4, "the oldest idle connections closed")
        assert [is_closed(sock) for sock in idle[-2:]] == [False, False], "a newer connection was closed before an older one"
    finally:
        for sock in idle:
            sock.close()


def answered(sock: socket.socket, path: str, ending: bytes) -> None:
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: t\r\n\r\n".encode())
    answer = b""
    while not answer.endswith(ending):
        answer += sock.recv(65536)


def one_more(runtime: Runtime, opened: list[socket.socket]) -> None:
    """One connection over the limit; returns once one of ``opened`` is closed for it."""
    before = sum(is_closed(sock) for sock in opened)
    opened.append(connect(runtime.process.port))
    wait_for(lambda: sum(is_closed(sock) for sock in opened) > before, 3, "a connection closed for the new one")


def test_at_the_connection_limit_a_connection_waits_from_its_last_answer(launches):
    """Mutation caught: a kept-alive connection left where its accept put it in the order, not moved at its answer."""
    runtime = launches["connections"]
    opened: list[socket.socket] = []
    try:
        for _ in range(CONNECTIONS):
            opened.append(connect(runtime.process.port))
            time.sleep(0.02)
        answered(opened[0], "/hello", b"hello")  # the first accepted is now the last answered
        time.sleep(QUIET)  # the silent ones may now be closed for a new one too
        first = opened[:CONNECTIONS]
        one_more(runtime, opened)
        assert [is_closed(sock) for sock in first] == [False, True, False, False]
        one_more(runtime, opened)
        assert [is_closed(sock) for sock in first] == [False, True, True, False]
    finally:
        for sock in opened:
            sock.close()


def test_a_connection_an_eviction_passes_during_its_call_is_evictable_again_after_its_answer(launches):
    """Mutation caught: a connection taken out of the order while its call ran, never put back (then never evicted)."""
    runtime = launches["connections"]
    calling = connect(runtime.process.port)
    opened = [calling]
    try:
        calling.sendall(f"GET /sleep?seconds={QUIET + 1} HTTP/1.1\r\nHost: t\r\n\r\n".encode())  # answered after the first newcomer came
        time.sleep(0.2)
        for _ in range(CONNECTIONS - 1):
            opened.append(connect(runtime.process.port))
            time.sleep(0.02)
        first = opened[:CONNECTIONS]
        time.sleep(QUIET)
        one_more(runtime, opened)
        assert [is_closed(sock) for sock in first] == [False, True, False, False], "the call was not passed over"
        calling.settimeout(10)  # is_closed() left it non-blocking
        answer = b""
        while not answer.endswith(b"slept"):
            answer += calling.recv(65536)
        time.sleep(QUIET)
        for _ in range(3):  # the two left of those accepted with it, and the first newcomer: all waited longer
            one_more(runtime, opened)
            assert not is_closed(calling)
        one_more(runtime, opened)
        assert is_closed(calling)
    finally:
        for sock in opened:
            sock.close()


def test_when_every_connection_has_a_call_a_new_one_waits_unread_and_is_answered_when_one_closes(launches):
    """Past SERVER_MAX_CONNECTIONS nothing is closed unanswered: the new connection waits as in the listen backlog."""
    runtime = launches["connections"]
    before = metric_total(runtime.get("/metrics").text, "function_rejected_total")
    answer, took = one_more_while_all_are_busy(runtime, CONNECTIONS)
    assert answer.startswith(b"HTTP/1.1 200 ") and answer.endswith(b"hello"), answer
    assert took > 0.5, f"answered after {took:.2f} s: it was not held while every connection had a call"
    assert metric_total(runtime.get("/metrics").text, "function_rejected_total") == before
