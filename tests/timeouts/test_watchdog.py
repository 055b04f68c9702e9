"""timeouts/watchdog.py: a call timed on the server's own thread, answered at its deadline by the watchdog.

The calls here have a ServerCall that answers on the client's socket (tests/support/socket_call.py)
and a worker that lends its threads: the socket is one end of a real socket pair, the worker a
stand-in that records what it is told; tests/adapters/gunicorn/test_worker.py and
tests/timeouts/test_decided.py run the real one, the edge worker.
"""

from __future__ import annotations

import io
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from itertools import pairwise

import pytest

from funcwsgi.middleware.timeout import TIMED_OUT, CallTimeout, TimeoutMiddleware
from funcwsgi.serving import SERVER_CALL_KEY

from ..support.socket_call import SocketCall
from ..support.sockets import until_closed
from ..support.wsgi import StartResponse, call
from .overrunning import DEADLINE, IDLE_SLACK, overlapping, request_id, returns_late, spinning


class LentThreads:
    """A server that lends its threads: told of each stuck call and of its return."""

    def __init__(self):
        self.extra_threads = []

    def call_stuck(self, key, extra_threads):
        self.extra_threads.append(extra_threads)

    def call_back(self, key, extra_threads):
        self.extra_threads.append(extra_threads)


LENDER = LentThreads()


@pytest.fixture
def lent_threads():
    LENDER.extra_threads = []
    return LENDER


def on_socket(sock, lender=LENDER):
    """The environ keys of a call served on a server thread, its client on ``sock``."""
    return {SERVER_CALL_KEY: SocketCall(sock, None, lender)}


def test_watched_calls_run_on_the_servers_thread(lent_threads, client_socket):
    threads = []

    def inner(environ, start_response):
        threads.append(threading.get_ident())
        start_response("200 OK", [("X-One", "1")])
        return [request_id.get().encode()]

    wrapped = TimeoutMiddleware(inner, seconds=5, max_threads=2)
    token = request_id.set("abc-123")
    try:
        status, headers, _, body, environ = call(wrapped, **on_socket(client_socket[0]))
    finally:
        request_id.reset(token)
    assert (status, headers["X-One"], body) == ("200 OK", "1", b"abc-123")
    assert threads == [threading.get_ident()]
    assert "funcwsgi.failure" not in environ
    assert not wrapped.watchdog.active and lent_threads.extra_threads == []


@pytest.mark.parametrize("method", ["GET", "HEAD", "POST"])
def test_a_watched_call_blocked_in_c_is_answered_by_the_watchdog_on_time(lent_threads, client_socket, method):
    """On time is judged in the watchdog's own looks, which a busy machine cannot stretch: the 408
    leaves at the first look past the deadline, and the looks come every TICK_SECONDS.

    Mutations caught, every run: answering 0.4 s past the deadline (``call.deadline + 0.4 <= now``:
    about eight looks past it), the watchdog looking every 0.5 s (``TICK_SECONDS = 0.5``); its raw
    answer's body choice with ``== "HEAD"`` made ``>=`` (POST without a body) or ``is``."""
    deadline = 0.05
    method = method.encode().decode()  # as a server parses it off the wire: not the interned literal
    server_end, client_end = client_socket
    release = threading.Event()
    answered = {}
    looks: list[float] = []
    looks_when_answered: list[int] = []
    deadlines: list[float] = []

    class Observed(SocketCall):
        __slots__ = ()

        def answer_now(self, *answer):
            looks_when_answered.append(len(looks))  # on the watchdog's thread, in the look that answers
            super().answer_now(*answer)

    def inner(environ, start_response):
        deadlines.extend(call.deadline.at for call in wrapped.watchdog.active)
        release.wait()  # blocked inside C until the client has its answer
        start_response("200 OK", [])
        return [b"late"]

    def client():
        answered["bytes"], answered["took"] = until_closed(client_end)
        release.set()

    reader = threading.Thread(target=client)
    reader.start()
    wrapped = TimeoutMiddleware(inner, seconds=deadline, max_threads=2)
    wrapped.watchdog.looked = looks.append
    server_call = {SERVER_CALL_KEY: Observed(server_end, None, lent_threads)}
    status, headers, _, body, environ = call(wrapped, method, **server_call, **{"funcwsgi.request_id": "r-1"})
    reader.join(5)
    head, _, sent_body = answered["bytes"].partition(b"\r\n\r\n")
    assert head.split(b"\r\n")[0] == b"HTTP/1.1 408 Request Timeout"
    assert b"Connection: close" in head and b"X-Request-Id: r-1" in head
    assert sent_body == (b"" if method == "HEAD" else TIMED_OUT.body)
    assert answered["took"] >= deadline
    # Late by design only up to one look: no look past the deadline went by without answering.
    [due] = deadlines
    [answering] = looks_when_answered
    past = [look - due for look in looks[:answering] if look >= due]
    assert len(past) == 1, f"answered at the look {past[-1]:.3f} s past the deadline, not at the first ({past[0]:.3f} s)"
    # And the looks come every TICK_SECONDS (0.05 s): the shortest of a few gaps, however busy the machine.
    until = time.monotonic() + 5
    while len(looks) < answering + 4 and time.monotonic() < until:
        time.sleep(0.01)
    gaps = [later - earlier for earlier, later in pairwise(list(looks))]
    assert min(gaps) < 0.25, gaps  # five ticks; a watchdog looking every 0.5 s never gets below it
    # The thread came back: the late response is replaced and the call counted as failed.
    assert status == "408 Request Timeout" and environ["funcwsgi.failure"] == "timeout"
    assert lent_threads.extra_threads == [1, 0]
    assert wrapped.liveness_problem() is None


def test_a_watched_python_loop_is_stopped_at_its_next_instruction(lent_threads, client_socket):
    caught = []
    wrapped = TimeoutMiddleware(spinning(caught), seconds=0.1, max_threads=2)
    status = call(wrapped, **on_socket(client_socket[0]))[0]
    assert status == "408 Request Timeout"
    assert isinstance(caught[0], CallTimeout)
    assert until_closed(client_socket[1])[0].startswith(b"HTTP/1.1 408 Request Timeout\r\n")
    time.sleep(0.2)  # an interrupt left pending would land here
    assert lent_threads.extra_threads == [1, 0]


def test_a_watched_call_that_started_writing_is_no_longer_timed(lent_threads, client_socket):
    def inner(environ, start_response):
        write = start_response("200 OK", [])
        write(b"streaming,")
        time.sleep(0.3)  # past the deadline, but the body is under way
        return [b" done"]

    wrapped = TimeoutMiddleware(inner, seconds=0.1, max_threads=2)
    status, _, written, body, _ = call(wrapped, **on_socket(client_socket[0]))
    assert (status, written, body) == ("200 OK", [b"streaming,"], b" done")
    client_socket[1].setblocking(False)
    with pytest.raises(BlockingIOError):  # the watchdog wrote nothing
        client_socket[1].recv(1)
    assert lent_threads.extra_threads == []


def test_when_every_watched_thread_is_stuck_calls_get_408_and_liveness_fails(lent_threads, timing):
    import socket

    release = threading.Event()

    def inner(environ, start_response):
        release.wait()
        start_response("200 OK", [])
        return [b""]

    wrapped = TimeoutMiddleware(inner, seconds=0.1, max_threads=1)
    pair, other = socket.socketpair(), socket.socketpair()
    stuck = threading.Thread(target=call, args=(wrapped,), kwargs=on_socket(pair[0]))
    stuck.start()
    try:
        deadline = time.monotonic() + 5
        while wrapped.liveness_problem() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert wrapped.liveness_problem() == "all 1 call threads are stuck in calls that timed out"
        began = time.monotonic()
        assert call(wrapped, **on_socket(other[0]))[0] == "408 Request Timeout"
        took = time.monotonic() - began
        assert 0.1 <= took < 0.1 + timing.slack(IDLE_SLACK), f"{took:.3f} s ({timing})"
    finally:
        release.set()
        stuck.join(5)
        for end in (*pair, *other):
            end.close()
    assert wrapped.liveness_problem() is None
    assert lent_threads.extra_threads == [1, 0]


def test_a_status_set_before_the_watchdog_answered_is_replaced_not_doubled(lent_threads, client_socket):
    # Servers refuse a second start_response without exc_info (gunicorn asserts): the
    # layer's late 408 must say it replaces what the function had set.
    release = threading.Event()
    strict_start_response = StartResponse(strict=True)

    def inner(environ, start_response):
        start_response("200 OK", [])
        release.wait()  # blocked until the client has its 408
        return [b"late"]

    threading.Timer(0.5, release.set).start()
    wrapped = TimeoutMiddleware(inner, seconds=0.1, max_threads=2)
    environ = {"REQUEST_METHOD": "GET", "PATH_INFO": "/", "wsgi.input": io.BytesIO(b""), **on_socket(client_socket[0])}
    body = wrapped(environ, strict_start_response)
    assert list(body) == [TIMED_OUT.body] and [(status, exc_info is not None) for status, _, exc_info in strict_start_response.calls] == [
        ("200 OK", False),
        ("408 Request Timeout", True),
    ]
    assert until_closed(client_socket[1])[0].startswith(b"HTTP/1.1 408 Request Timeout\r\n")


def test_the_late_result_of_a_watched_call_is_closed(lent_threads, client_socket):
    """Mutation caught: ``Watchdog.run`` raising ``Expired`` for a call that came back without closing its result."""
    closed = threading.Event()
    wrapped = TimeoutMiddleware(returns_late(closed), seconds=0.05, max_threads=2)
    status, _, _, body, environ = call(wrapped, **on_socket(client_socket[0]))
    assert (status, body, environ["funcwsgi.failure"]) == ("408 Request Timeout", TIMED_OUT.body, "timeout")
    assert closed.is_set(), "the late body was not closed when the call's thread came back"
    assert until_closed(client_socket[1])[0].startswith(b"HTTP/1.1 408 Request Timeout\r\n")
    assert lent_threads.extra_threads == [1, 0]


def test_watched_calls_run_at_the_same_moment(lent_threads):
    """Same mutation as above, on the watchdog path: each call on its own server thread and socket."""
    import socket

    wrapped = TimeoutMiddleware(overlapping(4), seconds=5, max_threads=8)
    pairs = [socket.socketpair() for _ in range(4)]
    try:
        with ThreadPoolExecutor(4) as pool:
            answers = list(pool.map(lambda pair: call(wrapped, **on_socket(pair[0]))[3], pairs))
    finally:
        for pair in pairs:
            for end in pair:
                end.close()
    assert answers == [b"together"] * 4


@pytest.mark.parametrize("answers_now", [False, None], ids=["call-that-cannot-answer-now", "no-server-call"])
def test_a_call_the_watchdog_cannot_answer_is_still_answered_on_time(lent_threads, timing, answers_now):
    """Mutation caught: ``call.answers_now`` with ``or`` for ``and`` (or left out): a call whose server
    cannot answer it at once must go to the hand-off, which answers it at the deadline."""
    release = threading.Event()

    def inner(environ, start_response):
        release.wait(3)
        start_response("200 OK", [])
        return [b"late"]

    wrapped = TimeoutMiddleware(inner, seconds=DEADLINE, max_threads=2)
    extra = {}
    if answers_now is not None:
        import socket

        server_end, client_end = socket.socketpair()

        class Unanswerable(SocketCall):  # as a call on an HTTP/2 stream says
            __slots__ = ()
            answers_now = False

        extra = {SERVER_CALL_KEY: Unanswerable(server_end, None, lent_threads)}
    began = time.monotonic()
    try:
        status = call(wrapped, **extra)[0]
        took = time.monotonic() - began
    finally:
        release.set()
    assert status == "408 Request Timeout"
    assert took < DEADLINE + timing.slack(IDLE_SLACK), f"{took:.3f} s ({timing})"


class UnexpectedSocket:
    """A client socket whose send fails in a way the watchdog does not expect."""

    def send(self, data, *flags):
        raise RuntimeError("not a socket error")

    def shutdown(self, how):
        pass


def test_the_watchdog_outlives_a_call_it_could_not_answer(lent_threads, client_socket, caplog):
    """Mutation caught: the watchdog loop not catching what answering one call raised (``except Exception``
    narrowed away): its thread dies and no later call is answered."""
    wrapped = TimeoutMiddleware(spinning([]), seconds=0.05, max_threads=4)
    with caplog.at_level("ERROR", logger="funcwsgi.timeout"):
        assert call(wrapped, **on_socket(UnexpectedSocket()))[0] == "408 Request Timeout"
        deadline = time.monotonic() + 5  # the watchdog logs on its own thread, after it interrupted the call
        while "Answering a call that timed out failed" not in caplog.text and time.monotonic() < deadline:
            time.sleep(0.01)
    assert "Answering a call that timed out failed" in caplog.text
    assert call(wrapped, **on_socket(client_socket[0]))[0] == "408 Request Timeout"
    assert until_closed(client_socket[1])[0].startswith(b"HTTP/1.1 408 Request Timeout\r\n")


def test_a_client_gone_before_its_408_is_noted_not_an_error(lent_threads, caplog):
    """Mutation caught: ``except (OSError, ValueError)`` around the watchdog's answer narrowed: a client
    that closed its connection is an ordinary event, logged at INFO, not an error with a traceback."""
    import socket

    server_end, client_end = socket.socketpair()
    client_end.close()
    wrapped = TimeoutMiddleware(spinning([]), seconds=0.05, max_threads=2)
    try:
        with caplog.at_level("INFO", logger="funcwsgi.timeout"):
            assert call(wrapped, **on_socket(server_end))[0] == "408 Request Timeout"
    finally:
        server_end.close()
    assert any(r.levelname == "INFO" and r.getMessage().startswith("The client of a timed-out call could not be answered") for r in caplog.records)
    assert not [r for r in caplog.records if r.levelname == "ERROR"]


def test_a_watched_function_may_replace_its_status_with_exc_info(lent_threads, client_socket):
    """Mutation caught: the watchdog's ``start_timed_response`` dropping the function's ``exc_info``
    (a strict server then refuses the second ``start_response``)."""
    import sys

    strict_start_response = StartResponse(strict=True)

    def inner(environ, start_response):
        start_response("200 OK", [])
        try:
            raise ValueError("changed its mind")
        except ValueError:
            start_response("503 Service Unavailable", [], sys.exc_info())
        return [b"later"]

    wrapped = TimeoutMiddleware(inner, seconds=5, max_threads=2)
    environ = {"REQUEST_METHOD": "GET", "PATH_INFO": "/", "wsgi.input": io.BytesIO(b""), **on_socket(client_socket[0])}
    assert b"".join(wrapped(environ, strict_start_response)) == b"later"
    assert strict_start_response.statuses == ["200 OK", "503 Service Unavailable"]

