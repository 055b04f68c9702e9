from __future__ import annotations

import contextvars
import io
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from itertools import pairwise

import pytest

from funcwsgi.adapters._socket_call import SocketCall
from funcwsgi.middleware.timeout import TIMED_OUT, CallTimeout, TimeoutMiddleware
from funcwsgi.serving import SERVER_CALL_KEY

from ..support.sockets import until_closed
from ..support.wsgi import StartResponse

request_id: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="unset")


def call(app, method: str = "GET", **environ):
    start = StartResponse()
    base = {"REQUEST_METHOD": method, "PATH_INFO": "/", "wsgi.input": io.BytesIO(b"")}
    base.update(environ)
    body = b"".join(app(base, start))
    return start.status, dict(start.headers), start.written, body, base


def test_a_call_in_time_passes_through_status_headers_and_written_data_in_order():
    def inner(environ, start_response):
        write = start_response("201 Created", [("X-One", "1")])
        write(b"first,")
        return [b"then the body"]

    wrapped = TimeoutMiddleware(inner, seconds=5, max_threads=2)
    outcomes = set()
    for _ in range(3):
        status, headers, written, body, environ = call(wrapped)
        outcomes.add((status, headers["X-One"], tuple(written), body))
        assert "funcwsgi.failure" not in environ
    assert outcomes == {("201 Created", "1", (b"first,",), b"then the body")}


def test_one_call_after_another_runs_on_the_same_long_lived_thread():
    threads = []

    def inner(environ, start_response):
        threads.append(threading.get_ident())
        start_response("200 OK", [])
        return [b""]

    wrapped = TimeoutMiddleware(inner, seconds=5, max_threads=4)
    for _ in range(5):
        call(wrapped)
    assert len(set(threads)) == 1
    assert threads[0] != threading.get_ident()


def test_the_function_runs_in_the_callers_context():
    def inner(environ, start_response):
        start_response("200 OK", [])
        return [request_id.get().encode()]

    wrapped = TimeoutMiddleware(inner, seconds=5, max_threads=2)
    token = request_id.set("abc-123")
    try:
        assert call(wrapped)[3] == b"abc-123"
    finally:
        request_id.reset(token)
    assert call(wrapped)[3] == b"unset"


def test_an_exception_of_the_function_reaches_the_outer_layers():
    def inner(environ, start_response):
        raise ValueError("bad input")

    with pytest.raises(ValueError, match="bad input"):
        call(TimeoutMiddleware(inner, seconds=5, max_threads=2))


#: The deadline of the timing cases, and the slack an answer gets on an idle machine (tests/support/calibration.py scales it).
DEADLINE = 0.2
IDLE_SLACK = 0.2


@pytest.mark.parametrize("method", ["GET", "HEAD"])
def test_a_call_blocked_in_c_past_its_deadline_gets_408_on_time(method, timing):
    """Mutation caught: the waiting thread waiting three times the deadline
    (``done.wait_ms(milliseconds * 3)`` in ``PooledCalls.__call__``), a 408 0.4 s late."""
    release = threading.Event()

    def inner(environ, start_response):
        release.wait()  # blocked inside C: the interrupt cannot land until it returns
        start_response("200 OK", [])
        return [b"late"]

    wrapped = TimeoutMiddleware(inner, seconds=DEADLINE, max_threads=2)
    began = time.monotonic()
    status, headers, _, body, environ = call(wrapped, method)
    took = time.monotonic() - began
    release.set()
    assert status == "408 Request Timeout"
    assert body == (b"" if method == "HEAD" else TIMED_OUT.body)
    assert headers["Content-Length"] == str(len(TIMED_OUT.body))
    assert environ["funcwsgi.failure"] == "timeout"
    assert DEADLINE <= took < DEADLINE + timing.slack(IDLE_SLACK), f"{took:.3f} s ({timing})"


def spinning(caught, stopped=None):
    """A function stuck in a Python loop, noting the exception that stops it."""

    def inner(environ, start_response):
        try:
            while True:
                pass
        except CallTimeout as error:
            caught.append(error)
            raise
        finally:
            if stopped is not None:
                stopped.set()

    return inner


def test_python_code_past_its_deadline_is_stopped_at_its_next_instruction():
    stopped = threading.Event()
    caught = []
    inner = spinning(caught, stopped)

    status = call(TimeoutMiddleware(inner, seconds=0.1, max_threads=2))[0]
    assert status == "408 Request Timeout"
    assert stopped.wait(2)
    assert isinstance(caught[0], CallTimeout) and not isinstance(caught[0], Exception)


def test_calls_that_never_return_keep_threads_bounded_and_liveness_says_so():
    release = threading.Event()
    entered = []

    def inner(environ, start_response):
        if environ["PATH_INFO"] == "/forever":
            entered.append(1)
            release.wait()
        start_response("200 OK", [])
        return [b"ok"]

    wrapped = TimeoutMiddleware(inner, seconds=0.05, max_threads=3)
    before = threading.active_count()
    try:
        for _ in range(2):
            assert call(wrapped, PATH_INFO="/forever")[0] == "408 Request Timeout"
        assert wrapped.liveness_problem() is None
        assert call(wrapped, PATH_INFO="/fine")[3] == b"ok"  # the one thread left serves
        for _ in range(6):
            assert call(wrapped, PATH_INFO="/forever")[0] == "408 Request Timeout"
        assert threading.active_count() - before <= 3
        assert len(entered) == 3  # the others never got a thread, and never ran
        assert wrapped.liveness_problem() == "all 3 call threads are stuck in calls that timed out"
        assert call(wrapped, PATH_INFO="/fine")[0] == "408 Request Timeout"
    finally:
        release.set()
    deadline = time.monotonic() + 5
    while wrapped.liveness_problem() is not None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert wrapped.liveness_problem() is None
    assert call(wrapped, PATH_INFO="/fine")[3] == b"ok"
    assert threading.active_count() - before <= 3


def test_an_abandoned_call_can_no_longer_read_the_request_body():
    release = threading.Event()
    outcome = []

    def inner(environ, start_response):
        try:
            release.wait()
        except CallTimeout:
            pass  # a function that swallows the interrupt and carries on
        try:
            environ["wsgi.input"].read()
        except CallTimeout as error:
            outcome.append(str(error))
        start_response("200 OK", [])
        return [b""]

    wrapped = TimeoutMiddleware(inner, seconds=0.05, max_threads=2)
    status = call(wrapped, "POST", CONTENT_LENGTH="4", **{"wsgi.input": io.BytesIO(b"body")})[0]
    assert status == "408 Request Timeout"
    release.set()
    deadline = time.monotonic() + 5
    while not outcome and time.monotonic() < deadline:
        time.sleep(0.01)
    assert outcome == ["the call timed out; its request body is no longer readable"]


def test_the_request_body_is_readable_in_time():
    def inner(environ, start_response):
        start_response("200 OK", [])
        return [environ["wsgi.input"].read()]

    wrapped = TimeoutMiddleware(inner, seconds=5, max_threads=2)
    assert call(wrapped, "POST", CONTENT_LENGTH="4", **{"wsgi.input": io.BytesIO(b"body")})[3] == b"body"


def test_in_the_stack_by_default_and_left_out_with_0(client_for):
    assert "timeout" in client_for("hello").application.layers
    assert "timeout" not in client_for("hello", server_call_timeout=0).application.layers


def test_sdk_get_request_works_inside_a_timed_call(client_for):
    client = client_for("no_args", server_call_timeout=5)
    assert client.get("/?id=7").json == {"id": "7", "again": "7"}


def test_a_forked_child_gets_its_own_threads():
    # A server that calls the app before forking workers must not leave them
    # waiting on threads that only exist in the parent.
    def inner(environ, start_response):
        start_response("200 OK", [])
        return [b"ok"]

    wrapped = TimeoutMiddleware(inner, seconds=5, max_threads=2)
    assert call(wrapped)[3] == b"ok"
    pid = os.fork()
    if pid == 0:  # the child: answer, or exit non-zero; never return into pytest
        try:
            os._exit(0 if call(wrapped)[3] == b"ok" else 1)
        except BaseException:
            os._exit(2)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert call(wrapped)[3] == b"ok"  # the parent's threads still serve


def test_a_timeout_longer_than_poll_can_wait_still_serves():
    def inner(environ, start_response):
        start_response("200 OK", [])
        return [b"ok"]

    assert call(TimeoutMiddleware(inner, seconds=1e12, max_threads=1))[3] == b"ok"


# The watchdog path: calls run on the server's own thread, with a ServerCall that
# answers on the client's socket (the default worker's SocketCall) and a worker that
# lends its threads. Here the socket is one end of a real socket pair and the worker
# is a stand-in that records what it is told; tests/test_gunicorn_server.py runs the real one.


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
        deadlines.extend(call.deadline for call in wrapped.watchdog.active)
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
    assert list(body) == [] and [(status, exc_info is not None) for status, _, exc_info in strict_start_response.calls] == [
        ("200 OK", False),
        ("408 Request Timeout", True),
    ]
    assert until_closed(client_socket[1])[0].startswith(b"HTTP/1.1 408 Request Timeout\r\n")


# -- the late result of a call that timed out is closed, on both paths ---------------


class LateBody:
    """What a function returns after its call timed out: a body holding something only close() frees."""

    def __init__(self, closed: threading.Event) -> None:
        self.closed = closed

    def __iter__(self):
        return iter([b"late"])

    def close(self) -> None:
        self.closed.set()


def returns_late(closed: threading.Event):
    """A function that waits until it is interrupted, swallows the interrupt and returns a body anyway."""

    def inner(environ, start_response):
        try:
            while True:
                time.sleep(0.01)  # blocked in C; the interrupt lands when each sleep returns
        except CallTimeout:
            pass  # exactly one interrupt comes per call: from here on the function runs undisturbed
        start_response("200 OK", [])
        return LateBody(closed)

    return inner


def test_the_late_result_of_a_pooled_call_is_closed():
    """Mutation caught: ``_discard`` in funcwsgi/timeouts/handoff.py dropping the late result without calling its ``close()``."""
    closed = threading.Event()
    wrapped = TimeoutMiddleware(returns_late(closed), seconds=0.05, max_threads=2)
    assert call(wrapped)[0] == "408 Request Timeout"
    assert closed.wait(5), "the late body was never closed"
    deadline = time.monotonic() + 5
    while wrapped.pooled.pool.stuck and time.monotonic() < deadline:
        time.sleep(0.01)
    assert wrapped.pooled.pool.stuck == 0


def test_the_late_result_of_a_watched_call_is_closed(lent_threads, client_socket):
    """Mutation caught: ``Watchdog.run`` raising ``Expired`` for a call that came back without closing its result."""
    closed = threading.Event()
    wrapped = TimeoutMiddleware(returns_late(closed), seconds=0.05, max_threads=2)
    status, _, _, body, environ = call(wrapped, **on_socket(client_socket[0]))
    assert (status, body, environ["funcwsgi.failure"]) == ("408 Request Timeout", b"", "timeout")
    assert closed.is_set(), "the late body was not closed when the call's thread came back"
    assert until_closed(client_socket[1])[0].startswith(b"HTTP/1.1 408 Request Timeout\r\n")
    assert lent_threads.extra_threads == [1, 0]


# -- calls overlap: the layer never runs them one at a time -------------------------------


def overlapping(count: int):
    """A function that returns only once ``count`` calls are inside it at the same moment."""
    inside = threading.Barrier(count)

    def inner(environ, start_response):
        inside.wait(timeout=2)  # BrokenBarrierError (a 500 upstream) unless the calls overlap
        start_response("200 OK", [])
        return [b"together"]

    return inner


def test_pooled_calls_run_at_the_same_moment():
    """Mutation caught: a timeout layer running one call at a time (``TimeoutMiddleware.__call__``
    behind one module-level lock): the barrier breaks, no call answers."""
    wrapped = TimeoutMiddleware(overlapping(4), seconds=5, max_threads=8)
    with ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(lambda _: call(wrapped)[3], range(4)))
    assert answers == [b"together"] * 4


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


# Cases the mutation run (make mutation, docs/reliability.md) found untested.


def test_a_call_waits_for_a_busy_pool_thread_instead_of_failing():
    """Mutations caught: ``acquire`` giving up at once (``while True`` made ``while False``,
    ``left <= 0`` inverted), and the waiting count never raised (``waiting += 0``: no one wakes it)."""
    def inner(environ, start_response):
        time.sleep(0.3 if environ["PATH_INFO"] == "/slow" else 0)
        start_response("200 OK", [])
        return [environ["PATH_INFO"].encode()]

    wrapped = TimeoutMiddleware(inner, seconds=3, max_threads=1)
    with ThreadPoolExecutor(2) as pool:
        slow = pool.submit(call, wrapped, PATH_INFO="/slow")
        deadline = time.monotonic() + 2
        while not wrapped.pooled.pool.count and time.monotonic() < deadline:
            time.sleep(0.005)  # the slow call holds the only thread
        began = time.monotonic()
        quick = call(wrapped, PATH_INFO="/quick")
        took = time.monotonic() - began
    assert (slow.result()[3], quick[3]) == (b"/slow", b"/quick")
    assert took < 1.5  # woken when the thread came back, not at the 3 s deadline


def test_when_every_pool_thread_is_stuck_a_call_gets_its_408_at_its_own_deadline(timing):
    """Mutations caught: the wait for a free thread ending early or late (``time.monotonic() * timeout``,
    ``left <= -1``)."""
    release = threading.Event()

    def inner(environ, start_response):
        release.wait()
        start_response("200 OK", [])
        return [b""]

    wrapped = TimeoutMiddleware(inner, seconds=DEADLINE, max_threads=1)
    try:
        assert call(wrapped)[0] == "408 Request Timeout"  # the only thread is stuck now
        began = time.monotonic()
        assert call(wrapped)[0] == "408 Request Timeout"
        took = time.monotonic() - began
    finally:
        release.set()
    assert DEADLINE <= took < DEADLINE + timing.slack(IDLE_SLACK), f"{took:.3f} s ({timing})"


def test_a_late_body_whose_close_fails_is_logged_with_its_traceback(caplog):
    """Mutation caught: ``exc_info=True`` made ``False`` in the warning of ``_discard``."""
    closed = threading.Event()

    class BrokenLateBody(LateBody):
        def close(self):
            self.closed.set()
            raise OSError("the cache connection is gone")

    def inner(environ, start_response):
        try:
            while True:
                time.sleep(0.01)
        except CallTimeout:
            pass
        start_response("200 OK", [])
        return BrokenLateBody(closed)

    with caplog.at_level("WARNING", logger="funcwsgi.timeout"):
        assert call(TimeoutMiddleware(inner, seconds=0.05, max_threads=2))[0] == "408 Request Timeout"
        assert closed.wait(5)
        deadline = time.monotonic() + 5
        while not any(r.getMessage().startswith("Closing the late response") for r in caplog.records) and time.monotonic() < deadline:
            time.sleep(0.01)
    (record,) = [r for r in caplog.records if r.getMessage() == "Closing the late response of a timed-out call failed"]
    assert record.exc_info is not None and record.exc_info[0] is OSError


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


def test_a_call_that_waited_for_a_thread_gets_only_what_is_left_of_its_deadline(timing):
    """Mutation caught: the time left after waiting for a thread counted as ``seconds + waited``
    (``_milliseconds(self.seconds + ...)``): the 408 would come late, or not at all."""
    def inner(environ, start_response):
        time.sleep(0.8 if environ["PATH_INFO"] == "/first" else 3)
        start_response("200 OK", [])
        return [b"done"]

    wrapped = TimeoutMiddleware(inner, seconds=1.0, max_threads=1)
    with ThreadPoolExecutor(1) as pool:
        first = pool.submit(call, wrapped, PATH_INFO="/first")
        deadline = time.monotonic() + 2
        while not wrapped.pooled.pool.count and time.monotonic() < deadline:
            time.sleep(0.005)
        began = time.monotonic()
        status = call(wrapped, PATH_INFO="/second")[0]  # waits ~0.8 s for the thread, then has ~0.2 s
        took = time.monotonic() - began
    assert first.result()[0] == "200 OK"
    assert status == "408 Request Timeout"
    assert took < 1.0 + timing.slack(IDLE_SLACK), f"{took:.3f} s ({timing})"  # the mutant answers at about 2.6 s


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
