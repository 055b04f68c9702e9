"""The cancellation layer: a thread watches the connections of calls on threads, on a real gunicorn."""

from __future__ import annotations

import socket
import time

import pytest

import sdk
from funcwsgi.current import current_environ
from funcwsgi.environ import CANCELLATION_KEY
from funcwsgi.middleware.cancellation import Cancellation, CancellationMiddleware
from funcwsgi.serving import SERVER_CALL_KEY
from funcwsgi.timeouts import Deadline, deadline_in

from ..support.processes import GUNICORN, Server, start


@pytest.fixture(scope="module")
def server(receiver):
    with start(GUNICORN, "cancellation", PUBLISHER_PROXY_ADDRESS=receiver.url + "/slow", PUBLISHER_PROXY_TIMEOUT="10") as running:
        yield running


def call_and_leave(server: Server, query: str, after: float) -> None:
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as client:
        client.sendall(f"GET /?{query} HTTP/1.1\r\nHost: test\r\n\r\n".encode())
        time.sleep(after)


def test_the_watcher_sees_a_client_leave_while_the_function_never_asks(server):
    call_and_leave(server, "id=left&seconds=1", after=0.2)
    assert "call left cause client" in server.wait_for_output("call left cause", timeout=5)


def test_a_client_that_stays_leaves_the_call_uncancelled(server):
    call_and_leave(server, "id=stayed&seconds=0.3", after=1.0)
    assert "call stayed cause None" in server.wait_for_output("call stayed cause", timeout=5)


def test_a_publish_in_flight_stops_within_half_a_second_of_its_client_leaving(server, receiver):
    before = len(receiver.received)
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as client:
        client.sendall(b"GET /?publish=1&id=inflight HTTP/1.1\r\nHost: test\r\n\r\n")
        receiver.wait_for(before + 1, timeout=5)  # the POST is in flight: the receiver answers it 3 s later
        left = time.monotonic()
    line = server.wait_for_output("publish inflight ended", timeout=5)
    stopped = time.monotonic() - left
    assert "not published: the call was cancelled (its client left)" in line, line
    assert stopped < 1.0, f"the publish stopped {stopped:.2f} s after the client left"  # 0.5 s, and the output's poll


def test_outside_a_call_nothing_is_cancelled():
    assert sdk.cancelled() is False


def test_a_cancelled_call_publishes_nothing(monkeypatch, receiver):
    monkeypatch.setenv("PUBLISHER_PROXY_ADDRESS", receiver.url + "/ok")
    before = len(receiver.received)
    cancellation = Cancellation()
    cancellation.cancel("client")
    token = current_environ.set({CANCELLATION_KEY: cancellation})
    try:
        assert sdk.cancelled() is True
        with pytest.raises(sdk.PublishError, match=r"not published: the call was cancelled \(its client left\)"):
            sdk.emit_cloud_event("order.created", "/shop", {"id": 7})
    finally:
        current_environ.reset(token)
    assert len(receiver.received) == before


def test_a_call_past_its_deadline_is_cancelled_by_timeout():
    cancellation = Cancellation()
    cancellation.deadline = deadline_in(-0.01)
    assert cancellation.cancelled() and cancellation.cause == "timeout"


class ConnectionStandIn:
    """A server's call whose client is there until the test says it left; not on a thread, so no watcher looks."""

    lent = None

    def __init__(self, connected: bool = True) -> None:
        self.connected = connected

    def client_connected(self) -> bool:
        return self.connected


class SentAwayBy408(ConnectionStandIn):
    """A client that left because of the 408, decided and sent as the client is looked at."""

    def __init__(self, deadline: Deadline) -> None:
        super().__init__(connected=False)
        self.deadline = deadline

    def client_connected(self) -> bool:
        self.deadline.expire()  # what the watchdog does before it answers; the answer sends the client away
        return False


def test_a_client_sent_away_by_the_408_counts_the_call_as_timed_out_not_left():
    """Mutation caught: the client's leave taken as the cause without asking the deadline. The 408 can go out while the
    watcher looks: in a CI run, twelve timed-out calls all failed, fewer were counted ``timeout``."""
    deadline = deadline_in(60)
    cancellation = Cancellation(deadline, SentAwayBy408(deadline))
    assert cancellation.cancelled() and cancellation.cause == "timeout"


def test_a_client_that_left_before_the_deadline_is_the_cause():
    cancellation = Cancellation(deadline_in(60), ConnectionStandIn(connected=False))
    assert cancellation.cancelled() and cancellation.cause == "client"


def streamed(environ, start_response):
    start_response("200 OK", [("Content-Type", "text/plain")])
    yield b"first"
    yield b"last"


def test_a_client_that_leaves_once_a_streamed_answer_is_all_produced_cancels_nothing():
    """Mutation caught: the call's connection still asked after the body's last chunk. The server sends that chunk,
    then closes the body; a client that had it all and left in between was counted as a cancelled call."""
    counted: list[str] = []
    connection = ConnectionStandIn()
    environ = {SERVER_CALL_KEY: connection}
    body = CancellationMiddleware(streamed, seconds=0, count=counted.append)(environ, lambda *answer: None)
    assert list(body) == [b"first", b"last"]
    connection.connected = False
    assert not environ[CANCELLATION_KEY].cancelled()
    body.close()
    assert counted == []


def test_a_client_that_leaves_in_the_middle_of_a_streamed_answer_cancels_it():
    counted: list[str] = []
    connection = ConnectionStandIn()
    environ = {SERVER_CALL_KEY: connection}
    body = CancellationMiddleware(streamed, seconds=0, count=counted.append)(environ, lambda *answer: None)
    assert next(iter(body)) == b"first"
    connection.connected = False
    assert environ[CANCELLATION_KEY].cancelled()
    body.close()
    assert counted == ["client"]
