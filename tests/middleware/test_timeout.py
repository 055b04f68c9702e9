from __future__ import annotations

import contextvars
import io
import os
import threading
import time

import pytest

from funcwsgi.middleware.timeout import TIMED_OUT, CallTimeout, TimeoutMiddleware

request_id: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="unset")


def call(app, method: str = "GET", **environ):
    seen = {}

    def start_response(status, headers, exc_info=None):
        seen["status"], seen["headers"] = status, headers
        return lambda data: seen.setdefault("written", []).append(data)

    base = {"REQUEST_METHOD": method, "PATH_INFO": "/", "wsgi.input": io.BytesIO(b"")}
    base.update(environ)
    body = b"".join(app(base, start_response))
    return seen["status"], dict(seen["headers"]), seen.get("written", []), body, base


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


@pytest.mark.parametrize("method", ["GET", "HEAD"])
def test_a_call_blocked_in_c_past_its_deadline_gets_408_on_time(method):
    release = threading.Event()

    def inner(environ, start_response):
        release.wait()  # blocked inside C: the interrupt cannot land until it returns
        start_response("200 OK", [])
        return [b"late"]

    wrapped = TimeoutMiddleware(inner, seconds=0.2, max_threads=2)
    began = time.monotonic()
    status, headers, _, body, environ = call(wrapped, method)
    took = time.monotonic() - began
    release.set()
    assert status == "408 Request Timeout"
    assert body == (b"" if method == "HEAD" else TIMED_OUT.body)
    assert headers["Content-Length"] == str(len(TIMED_OUT.body))
    assert environ["funcwsgi.failure"] == "timeout"
    assert 0.2 <= took < 1.0


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


# The watchdog path: calls run on the server's own thread, as under gunicorn,
# where the client's socket is in the environ and the worker lends its threads.
# Here the socket is one end of a real socket pair and the worker is a stand-in
# that records what it is told; tests/test_gunicorn_server.py runs the real one.


class LentThreads:
    def __init__(self):
        self.extra_threads = []

    def call_stuck(self, environ, extra_threads):
        self.extra_threads.append(extra_threads)

    def call_back(self, environ, extra_threads):
        self.extra_threads.append(extra_threads)


@pytest.fixture
def lent_threads():
    from funcwsgi.timeouts import watchdog

    threads = LentThreads()
    watchdog.use_server_threads(threads)
    yield threads
    watchdog._server_threads = None


@pytest.fixture
def client_socket():
    import socket

    server_end, client_end = socket.socketpair()
    client_end.settimeout(5)
    yield server_end, client_end
    server_end.close()
    client_end.close()


def _read_all(sock) -> bytes:
    chunks = []
    while chunk := sock.recv(4096):
        chunks.append(chunk)
    return b"".join(chunks)


def test_watched_calls_run_on_the_servers_thread(lent_threads, client_socket):
    threads = []

    def inner(environ, start_response):
        threads.append(threading.get_ident())
        start_response("200 OK", [("X-One", "1")])
        return [request_id.get().encode()]

    wrapped = TimeoutMiddleware(inner, seconds=5, max_threads=2)
    token = request_id.set("abc-123")
    try:
        status, headers, _, body, environ = call(wrapped, **{"gunicorn.socket": client_socket[0]})
    finally:
        request_id.reset(token)
    assert (status, headers["X-One"], body) == ("200 OK", "1", b"abc-123")
    assert threads == [threading.get_ident()]
    assert "funcwsgi.failure" not in environ
    assert not wrapped.watchdog.active and lent_threads.extra_threads == []


@pytest.mark.parametrize("method", ["GET", "HEAD"])
def test_a_watched_call_blocked_in_c_is_answered_by_the_watchdog_on_time(lent_threads, client_socket, method):
    server_end, client_end = client_socket
    release = threading.Event()
    answered = {}

    def inner(environ, start_response):
        release.wait()  # blocked inside C until the client has its answer
        start_response("200 OK", [])
        return [b"late"]

    def client():
        began = time.monotonic()
        answered["bytes"] = _read_all(client_end)
        answered["took"] = time.monotonic() - began
        release.set()

    reader = threading.Thread(target=client)
    reader.start()
    wrapped = TimeoutMiddleware(inner, seconds=0.2, max_threads=2)
    status, headers, _, body, environ = call(wrapped, method, **{"gunicorn.socket": server_end, "funcwsgi.request_id": "r-1"})
    reader.join(5)
    head, _, sent_body = answered["bytes"].partition(b"\r\n\r\n")
    assert head.split(b"\r\n")[0] == b"HTTP/1.1 408 Request Timeout"
    assert b"Connection: close" in head and b"X-Request-Id: r-1" in head
    assert sent_body == (b"" if method == "HEAD" else TIMED_OUT.body)
    assert 0.2 <= answered["took"] < 1.0
    # The thread came back: the late response is replaced and the call counted as failed.
    assert status == "408 Request Timeout" and environ["funcwsgi.failure"] == "timeout"
    assert lent_threads.extra_threads == [1, 0]
    assert wrapped.liveness_problem() is None


def test_a_watched_python_loop_is_stopped_at_its_next_instruction(lent_threads, client_socket):
    caught = []
    wrapped = TimeoutMiddleware(spinning(caught), seconds=0.1, max_threads=2)
    status = call(wrapped, **{"gunicorn.socket": client_socket[0]})[0]
    assert status == "408 Request Timeout"
    assert isinstance(caught[0], CallTimeout)
    assert _read_all(client_socket[1]).startswith(b"HTTP/1.1 408 Request Timeout\r\n")
    time.sleep(0.2)  # an interrupt left pending would land here
    assert lent_threads.extra_threads == [1, 0]


def test_a_watched_call_that_started_writing_is_no_longer_timed(lent_threads, client_socket):
    def inner(environ, start_response):
        write = start_response("200 OK", [])
        write(b"streaming,")
        time.sleep(0.3)  # past the deadline, but the body is under way
        return [b" done"]

    wrapped = TimeoutMiddleware(inner, seconds=0.1, max_threads=2)
    status, _, written, body, _ = call(wrapped, **{"gunicorn.socket": client_socket[0]})
    assert (status, written, body) == ("200 OK", [b"streaming,"], b" done")
    client_socket[1].setblocking(False)
    with pytest.raises(BlockingIOError):  # the watchdog wrote nothing
        client_socket[1].recv(1)
    assert lent_threads.extra_threads == []


def test_when_every_watched_thread_is_stuck_calls_get_408_and_liveness_fails(lent_threads):
    import socket

    release = threading.Event()

    def inner(environ, start_response):
        release.wait()
        start_response("200 OK", [])
        return [b""]

    wrapped = TimeoutMiddleware(inner, seconds=0.1, max_threads=1)
    pair, other = socket.socketpair(), socket.socketpair()
    stuck = threading.Thread(target=call, args=(wrapped,), kwargs={"gunicorn.socket": pair[0]})
    stuck.start()
    try:
        deadline = time.monotonic() + 5
        while wrapped.liveness_problem() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert wrapped.liveness_problem() == "all 1 call threads are stuck in calls that timed out"
        began = time.monotonic()
        assert call(wrapped, **{"gunicorn.socket": other[0]})[0] == "408 Request Timeout"
        assert 0.1 <= time.monotonic() - began < 1.0
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
    calls = []

    def strict_start_response(status, headers, exc_info=None):
        if calls and exc_info is None:
            raise AssertionError("Response headers already set!")
        calls.append((status, exc_info is not None))
        return lambda data: None

    def inner(environ, start_response):
        start_response("200 OK", [])
        release.wait()  # blocked until the client has its 408
        return [b"late"]

    threading.Timer(0.5, release.set).start()
    wrapped = TimeoutMiddleware(inner, seconds=0.1, max_threads=2)
    environ = {"REQUEST_METHOD": "GET", "PATH_INFO": "/", "wsgi.input": io.BytesIO(b""), "gunicorn.socket": client_socket[0]}
    body = wrapped(environ, strict_start_response)
    assert list(body) == [] and calls == [("200 OK", False), ("408 Request Timeout", True)]
    assert _read_all(client_socket[1]).startswith(b"HTTP/1.1 408 Request Timeout\r\n")
