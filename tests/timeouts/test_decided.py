"""timeouts.Deadline: one decision per call, the function's answer or the 408, shared by every timing path.

In-process for the decision and the layers; one real server (``funcwsgi serve``, tracing to a real
OTLP receiver) for what the wire, the span and the access log say. tests/conformance/test_timeout_decided.py
checks the wire on every runtime and server.
"""

from __future__ import annotations

import re
import socket
import threading
import time

import pytest

from funcwsgi.environ import CANCELLATION_KEY, FAILURE_KEY
from funcwsgi.middleware.cancellation import CancellationMiddleware
from funcwsgi.middleware.timeout import TimeoutMiddleware
from funcwsgi.serving import SERVER_CALL_KEY
from funcwsgi.timeouts import EXPIRED, KEPT, deadline_in

from ..support.logs import log_records
from ..support.polling import wait_for
from ..support.processes import SERVE, start
from ..support.socket_call import SocketCall
from ..support.wsgi import StartResponse, drain

# -- the decision ----------------------------------------------------------------------------------


def test_an_answer_taken_before_the_deadline_is_kept_and_the_deadline_then_changes_nothing():
    deadline = deadline_in(5)
    assert deadline.keep() is True
    assert deadline.expire() is False and deadline.outcome == KEPT
    assert deadline.expired_by_now() is False


def test_an_answer_taken_after_the_deadline_is_dropped_even_before_anyone_looked():
    deadline = deadline_in(-0.001)
    assert deadline.keep() is False and deadline.outcome == EXPIRED
    assert deadline.expire() is True


def test_once_expired_an_answer_is_never_kept():
    deadline = deadline_in(5)
    assert deadline.expire() is True
    assert deadline.keep() is False


def test_asking_the_clock_before_the_deadline_decides_nothing():
    deadline = deadline_in(5)
    assert deadline.expired_by_now() is False and deadline.outcome is None
    past = deadline_in(-0.001)
    assert past.expired_by_now() is True and past.outcome == EXPIRED


def test_threads_racing_for_one_deadline_all_see_the_same_outcome():
    """Mutation caught: a decision that is a read then a write (``if outcome is None: outcome = ...``)
    lets two threads each believe they won, now and then; here every thread must agree, every round."""
    for _ in range(200):
        deadline = deadline_in(0)
        seen: list[bool] = []
        go = threading.Barrier(4)
        sides = (deadline.keep, lambda deadline=deadline: not deadline.expire()) * 2
        threads = [threading.Thread(target=race, args=(go, side, seen)) for side in sides]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(set(seen)) == 1, seen


def race(go: threading.Barrier, side, seen: list[bool]) -> None:
    """Wait for the others, then ask ``side`` (True: the function's answer goes out)."""
    go.wait()
    seen.append(side())


# -- the layers: told it timed out, the function answers anyway ----------------------------------


def told_then_answers(environ, start_response):
    """Sets its status, then waits until it is told it timed out (by the clock) and answers 200 all the same."""
    start_response("200 OK", [("Content-Type", "text/plain")])
    while not environ[CANCELLATION_KEY].cancelled():
        pass
    return [b"done"]


def stack(seconds: float):
    return CancellationMiddleware(TimeoutMiddleware(told_then_answers, seconds=seconds, max_threads=2), seconds=seconds)


def serve_once(app, **environ):
    start_response = StartResponse(strict=True)
    base = {"REQUEST_METHOD": "GET", "PATH_INFO": "/", "wsgi.input": None, **environ}
    body = drain(app(base, start_response))
    return start_response, body, base


@pytest.mark.parametrize("path", ["watchdog", "hand-off"])
def test_a_function_told_it_timed_out_gets_the_408_out_not_its_answer(path):
    """Each round the function is told by the clock, a few milliseconds before the watchdog's
    next look: the layer answers 408 itself, replacing the status the function set.

    Mutation caught: ``TimedCall.finish`` and ``CallThread.settle`` keeping the answer without asking
    the deadline: the function's 200 goes out.
    """
    app = stack(0.05)
    for _ in range(5):
        server_end, client_end = socket.socketpair()
        try:
            environ = {SERVER_CALL_KEY: SocketCall(server_end)} if path == "watchdog" else {}
            start_response, body, environ = serve_once(app, **environ)
            server_end.shutdown(socket.SHUT_WR)
            client_end.settimeout(2)
            on_the_socket = client_end.recv(65536)
        finally:
            server_end.close()
            client_end.close()
        assert start_response.status == "408 Request Timeout", start_response.calls
        assert environ[FAILURE_KEY] == "timeout" and environ[CANCELLATION_KEY].cause == "timeout"
        # Either way the layer returns the 408's body; when the watchdog looked first and answered on the
        # socket, the server discards it (ServerCall.answer_now) and the layers outside count it.
        assert body == b"Timeout while processing the function"
        if on_the_socket:
            assert on_the_socket.startswith(b"HTTP/1.1 408 ")
        elif path == "watchdog":
            assert start_response.statuses == ["200 OK", "408 Request Timeout"] and start_response.exc_info is not None


# -- a real server: the wire, the span and the access log agree -------------------------------------

CALL_TIMEOUT = 0.3


@pytest.fixture(scope="module")
def server(collector):
    with start(
        SERVE, "told_it_timed_out", SERVER_CALL_TIMEOUT=str(CALL_TIMEOUT), SERVER_ACCESS_LOG="true",
        TRACE_COLLECTOR_ENDPOINT=f"http://127.0.0.1:{collector.port}/v1/traces", OTEL_BSP_SCHEDULE_DELAY="100",
    ) as running:
        yield running


def raw_call(port: int, path: str, trace_id: str) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as client:
        client.sendall(f"GET {path} HTTP/1.1\r\nHost: t\r\ntraceparent: 00-{trace_id}-{'e' * 16}-01\r\nConnection: close\r\n\r\n".encode())
        received = b""
        while chunk := client.recv(65536):
            received += chunk
    return received


def span_status(collector, trace_id: str) -> int | None:
    for span in log_records(collector.stdout):
        if span["traceId"] == trace_id and span["kind"] == 2:  # the server span
            for item in span["attributes"]:
                if item["key"] == "http.response.status_code":
                    return int(next(iter(item["value"].values())))
    return None


@pytest.mark.parametrize(
    ("path", "status"),
    # The watchdog's case last: its calls keep their threads blocked after their 408s, and calls made
    # while every thread is blocked would rightly get 503s (the admission layer) on a slow machine.
    [("/", 408), (f"/?seconds={CALL_TIMEOUT / 3:g}", 200), (f"/?blocked={CALL_TIMEOUT * 3:g}", 408)],
    ids=["told", "in-time", "answered-by-the-watchdog"],
)
def test_the_wire_the_span_and_the_access_log_say_the_same(server, collector, path, status):
    trace_ids = [f"{index:02x}{time.time_ns():030x}"[-32:] for index in range(8)]
    wires = {trace_id: raw_call(server.port, path, trace_id) for trace_id in trace_ids}
    for wire in wires.values():
        assert [int(code) for code in re.findall(rb"(?:^|\r\n)HTTP/1\.1 (\d{3}) ", wire)] == [status], wire
    wait_for(lambda: all(span_status(collector, trace_id) is not None for trace_id in trace_ids), 15, "a server span per call", lambda: collector.stdout)
    assert {span_status(collector, trace_id) for trace_id in trace_ids} == {status}
    wait_for(lambda: len([r for r in log_records(server.stdout) if r.get("trace_id") in trace_ids and "status" in r]) == len(trace_ids), 5, "an access record per call")
    logged = [record for record in log_records(server.stdout) if record.get("trace_id") in trace_ids and "status" in record]
    assert [record["status"] for record in logged] == [status] * len(trace_ids)
    # The bytes logged are the body the client got, whoever sent it (the function, the layer or the watchdog).
    sent = {trace_id: len(wire.partition(b"\r\n\r\n")[2]) for trace_id, wire in wires.items()}
    assert {record["trace_id"]: record["bytes"] for record in logged} == sent
