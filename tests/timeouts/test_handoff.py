"""timeouts/handoff.py: a call timed on a pool thread while the server's thread waits (a call its server cannot answer at once)."""

from __future__ import annotations

import io
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from funcwsgi.middleware.timeout import TIMED_OUT, CallTimeout, TimeoutMiddleware

from ..support.wsgi import call
from .overrunning import DEADLINE, IDLE_SLACK, LateBody, overlapping, request_id, returns_late, spinning


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


def test_pooled_calls_run_at_the_same_moment():
    """Mutation caught: a timeout layer running one call at a time (``TimeoutMiddleware.__call__``
    behind one module-level lock): the barrier breaks, no call answers."""
    wrapped = TimeoutMiddleware(overlapping(4), seconds=5, max_threads=8)
    with ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(lambda _: call(wrapped)[3], range(4)))
    assert answers == [b"together"] * 4


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
