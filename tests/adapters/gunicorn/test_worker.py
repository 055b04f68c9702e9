"""funcwsgi's gunicorn worker, the HTTP edge (funcwsgi/adapters/gunicorn/worker.py), on real gunicorn processes.

Each server starts once per module: gunicorn with funcwsgi's settings and the
edge worker, serving a plain function and an ``async def`` one. What only the
edge does is checked here on raw sockets; the suites of tests/reliability and
tests/conformance run on it too.
"""

from __future__ import annotations

import ast
import os
import signal
import socket
import statistics
import threading
import time
from collections import Counter
from pathlib import Path

import gunicorn.workers.base
import pytest

from funcwsgi.adapters.gunicorn.connections import SWEEP_SECONDS
from funcwsgi.adapters.gunicorn.worker import HttpEdgeWorker

from ...support.paths import REPO
from ...support.processes import BIN, children, http_get, start
from ...support.sockets import connect, exchange, one_answer, sent_until_closed, status_of, until_closed

EDGE = [str(BIN / "gunicorn"), "-c", "python:funcwsgi.gunicorn_conf", "-k", "funcwsgi.adapters.gunicorn.worker.HttpEdgeWorker", "funcwsgi:app"]
SETTINGS = {"SERVER_HTTP2": "false", "SERVER_NUMTHREADS": "2", "SERVER_HEADER_TIMEOUT": "1", "SERVER_BODY_TIMEOUT": "1", "SERVER_MAX_BODY_SIZE": "1000"}


@pytest.fixture(scope="module")
def plain():
    with start(EDGE, "hostile", **SETTINGS) as server:
        yield server


@pytest.fixture(scope="module")
def on_loop():
    with start(EDGE, "async_fn", **SETTINGS) as server:
        yield server


def get(path: str = "/", extra: bytes = b"", version: bytes = b"HTTP/1.1") -> bytes:
    return b"GET " + path.encode() + b" " + version + b"\r\nHost: x\r\n" + extra + b"\r\n"


def test_the_worker_stands_on_gunicorns_public_worker_class_only():
    bases = [cls for cls in HttpEdgeWorker.__mro__ if cls.__module__.startswith("gunicorn")]
    assert bases == [gunicorn.workers.base.Worker]


def test_a_plain_function_is_answered_on_a_kept_alive_connection(plain):
    with connect(plain.port) as sock:
        for _ in range(3):
            answer = one_answer(sock, get("/"))
            assert status_of(answer) == 200 and answer.endswith(b"hello")
            assert b"content-length: 5" in answer.lower()


def test_an_async_function_is_answered_on_the_same_worker(on_loop):
    with connect(on_loop.port) as sock:
        answer = one_answer(sock, get("/there"))
    assert status_of(answer) == 200 and b'"path": "/there"' in answer


def test_a_body_reaches_the_function(plain):
    with connect(plain.port) as sock:
        answer = one_answer(sock, b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello")
        assert answer.endswith(b'{"size": 5}'), answer
        chunked = b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\n"
        assert one_answer(sock, chunked).endswith(b'{"size": 5}')


def test_pipelined_requests_are_answered_in_order(plain):
    answer = exchange(plain.port, get("/sleep?s=0.05") + get("/") + get("/", b"Connection: close\r\n"))
    assert answer.count(b"HTTP/1.1 200") == 3
    assert answer.index(b"slept") < answer.index(b"hello")


def test_a_valid_request_followed_by_garbage_is_answered_before_the_400(plain):
    answer = exchange(plain.port, get("/") + b"\x00garbage\r\n\r\n")
    assert status_of(answer) == 200
    assert answer.index(b"hello") < answer.index(b"HTTP/1.1 400")


@pytest.mark.parametrize(
    "request_bytes, status",
    [
        pytest.param(b"GET / HTTP/1.1\r\nHost: x, y\r\n\r\n", 400, id="host-list"),
        pytest.param(b"GET / HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n", 400, id="host-repeated"),
        pytest.param(b"GET / HTTP/1.1\r\n\r\n", 400, id="host-missing"),
        pytest.param(b"POST /echo HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400, id="chunked-on-http-1.0"),
        pytest.param(b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\n", 413, id="chunk-size-past-limit"),
        pytest.param(
            b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n0\r\nContent-Length: 1\r\n\r\n", 400, id="trailer-content-length"
        ),
        pytest.param(b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1;\r\na\r\n0\r\n\r\n", 400, id="chunk-extension-empty"),
        pytest.param(b"GET / HTTP/1.1\r\nHost: x\r\nX: " + b"a" * 70000 + b"\r\n\r\n", 431, id="head-too-large"),
        pytest.param(b"GET / HTTP/1.1\r\nHost: x\r\n" + b"X: y\r\n" * 101 + b"\r\n", 431, id="too-many-fields"),
        pytest.param(b"GET /" + b"a" * 5000 + b" HTTP/1.1\r\nHost: x\r\n\r\n", 414, id="request-line-too-long"),
        pytest.param(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 400, id="http2-preface-without-http2"),
    ],
)
def test_what_llhttp_lets_through_is_refused_and_the_connection_closed(plain, request_bytes, status):
    began = time.monotonic()
    answer = exchange(plain.port, request_bytes, timeout=5)
    assert status_of(answer) == status, answer[:200]
    assert time.monotonic() - began < 2, "refused at once, the connection closed"


def test_a_body_past_the_limit_is_answered_413_without_being_waited_for(plain):
    answer, seconds = sent_until_closed(plain.port, b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n")
    assert status_of(answer) == 413 and seconds < 2


def test_expect_100_continue_is_answered_before_the_body_is_sent(plain):
    with connect(plain.port) as sock:
        sock.sendall(b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nExpect: 100-continue\r\n\r\n")
        assert sock.recv(100) == b"HTTP/1.1 100 Continue\r\n\r\n"
        sock.sendall(b"abc")
        answer = one_answer(sock, b"")
    assert answer.endswith(b'{"size": 3}')


UPGRADE = b"Upgrade: websocket\r\nConnection: Upgrade\r\n"


@pytest.mark.parametrize(
    "framing, body_parts",
    [
        pytest.param(b"Content-Length: 5\r\n", [b"hello"], id="content-length"),
        pytest.param(b"Transfer-Encoding: chunked\r\n", [b"3\r\nhel\r\n", b"2\r\nlo\r\n0\r\n\r\n"], id="chunked-in-pieces"),
        pytest.param(b"", [], id="no-body"),
    ],
)
def test_an_upgrade_the_edge_does_not_take_is_ignored_and_the_request_read_as_usual(plain, framing, body_parts):
    """RFC 9110 section 7.8: the server may ignore Upgrade; the request is then HTTP/1.1, body and keep-alive included."""
    with connect(plain.port) as sock:
        sock.sendall(b"POST /echo HTTP/1.1\r\nHost: x\r\n" + UPGRADE + framing + b"\r\n")
        for part in body_parts:
            time.sleep(0.05)  # the body comes after the head, as a client sends it
            sock.sendall(part)
        answer = one_answer(sock, b"")
        assert status_of(answer) == 200 and answer.endswith(b'{"size": %d}' % (5 if body_parts else 0)), answer
        assert b"connection: close" not in answer.lower()
        assert one_answer(sock, get("/")).endswith(b"hello"), "the connection stays HTTP/1.1 for the next request"


def test_http_1_0_closes_unless_asked_to_keep_alive(plain):
    assert b"connection: close" in exchange(plain.port, get("/", version=b"HTTP/1.0")).lower()
    with connect(plain.port) as sock:
        answer = one_answer(sock, get("/", b"Connection: keep-alive\r\n", version=b"HTTP/1.0"))
        assert b"connection: keep-alive" in answer.lower()
        assert status_of(one_answer(sock, get("/"))) == 200


def test_a_slow_head_gets_408_and_an_idle_connection_is_closed_quietly(plain):
    with connect(plain.port) as slow, connect(plain.port) as idle:
        slow.sendall(b"GET / HTTP/1.1\r\nHost")
        slow_answer, slow_seconds = until_closed(slow, 5)
        idle_answer, idle_seconds = until_closed(idle, 5)
    assert status_of(slow_answer) == 408 and slow_seconds < 3
    assert idle_answer == b"" and idle_seconds < 3


def test_a_stalled_body_gets_408(plain):
    answer, seconds = sent_until_closed(plain.port, b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc")
    assert status_of(answer) == 408 and seconds < 3


def test_slow_clients_hold_no_thread(plain):
    """Two threads; ten clients each with half a head: every normal call is still answered at once."""
    holders = [connect(plain.port) for _ in range(10)]
    try:
        for sock in holders:
            sock.sendall(b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nab")
        for _ in range(4):
            began = time.monotonic()
            with connect(plain.port) as sock:
                assert status_of(one_answer(sock, get("/"))) == 200
            assert time.monotonic() - began < 0.5
    finally:
        for sock in holders:
            sock.close()


def test_the_call_timeout_answers_408_on_time_and_the_thread_is_replaced():
    with start(EDGE, "hostile", SERVER_NUMTHREADS="1", SERVER_CALL_TIMEOUT="1") as server:
        began = time.monotonic()
        answer = exchange(server.port, get("/sleep?s=3"), timeout=5)
        assert status_of(answer) == 408 and time.monotonic() - began < 2.5
        # the one thread is still in the function: another took its place
        assert exchange(server.port, get("/", b"Connection: close\r\n"), timeout=2).endswith(b"hello")


def test_sigterm_answers_the_call_in_flight_then_the_worker_exits():
    server = start(EDGE, "hostile", SERVER_GRACEFUL_TIMEOUT="5")
    try:
        answers: list[bytes] = []
        caller = threading.Thread(target=lambda: answers.append(exchange(server.port, get("/sleep?s=1", b"Connection: close\r\n"))))
        caller.start()
        time.sleep(0.3)  # the call has started: its thread sleeps for a second
        server.signal(signal.SIGTERM)
        caller.join(5)
        assert answers and answers[0].endswith(b"slept"), answers
        assert server.process.wait(10) == 0
    finally:
        server.stop()


def exited(pid: int) -> bool:
    """The process ended: gone, or a zombie its parent has not reaped yet."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def test_sigterm_ends_an_idle_worker_at_once_not_at_its_next_sweep(timing):
    # uvloop takes the signal wake-up fd while it runs, so gunicorn's pipe stays silent: unless the
    # worker wakes its loop from the handler, it sees SIGTERM only at its next connection sweep
    # (SWEEP_SECONDS; 0.285 s from signal to exit here, against 0.035 s when woken).
    # One worker: the one answering the check below is the one signalled, its loop running.
    with start(EDGE, "hostile", **SETTINGS, SERVER_WORKERS="1") as server:
        took: list[float] = []
        stopped: set[int] = set()
        for _ in range(5):
            deadline = time.monotonic() + 30
            while not (workers := [pid for pid in children(server.process.pid) if pid not in stopped]):
                assert time.monotonic() < deadline, "gunicorn started no new worker"
                time.sleep(0.01)
            assert http_get("127.0.0.1", server.port, "/")[0] == 200  # the new worker serves: its loop runs
            worker = workers[0]
            stopped.add(worker)
            began = time.monotonic()
            os.kill(worker, signal.SIGTERM)
            while not exited(worker):
                assert time.monotonic() - began < 10, "the worker did not exit within 10 s of SIGTERM"
                time.sleep(0.002)
            took.append(time.monotonic() - began)
        # The exit's own work (0.035 s here, at a calibrated speed of x3.5) scales with the machine; the sweep's wait does not.
        assert statistics.median(took) < timing.slack(0.015) + SWEEP_SECONDS / 2, (took, str(timing))


def test_tls_is_refused_at_start_in_one_line(tmp_path):
    (tmp_path / "cert.pem").write_text("not a certificate")
    server = start(EDGE, "hello", wait=False, GUNICORN_CMD_ARGS=f"--certfile {tmp_path / 'cert.pem'} --keyfile {tmp_path / 'cert.pem'}")
    try:
        status = server.process.wait(30)
        errors = server.stderr
    finally:
        server.stop()
    assert status != 0
    assert "terminate TLS in front of the function" in errors


def test_a_client_that_left_is_not_served(plain):
    """Two threads busy; a caller leaves while its call waits: the function never runs for it."""
    busy = [connect(plain.port) for _ in range(2)]
    try:
        for sock in busy:
            sock.sendall(get("/sleep?s=1"))
        time.sleep(0.2)
        leaving = socket.create_connection(("127.0.0.1", plain.port))
        leaving.sendall(get("/sleep?s=5"))
        time.sleep(0.1)
        leaving.close()
        for sock in busy:
            assert one_answer(sock, b"").endswith(b"slept")
        began = time.monotonic()
        with connect(plain.port) as sock:
            assert status_of(one_answer(sock, get("/"))) == 200
        assert time.monotonic() - began < 1, "the left caller's 5 s call never took a thread"
    finally:
        for sock in busy:
            sock.close()


@pytest.mark.parametrize("value, why", [("%E2%82%AC", "not latin-1"), ("a%0D%0Ab", "a line break")])
def test_a_response_field_the_wire_cannot_carry_is_the_stacks_500(value, why):
    with start(EDGE, "serving") as server:
        answer = exchange(server.port, get(f"/bad-header?value={value}", b"Connection: close\r\n"))
    assert status_of(answer) == 500, why


def test_an_answer_has_one_date_the_functions_own_if_it_set_one():
    with start(EDGE, "serving") as server:
        own = exchange(server.port, get("/dated", b"Connection: close\r\n"))
        plain = exchange(server.port, get("/hello", b"Connection: close\r\n"))
    assert [line for line in own.split(b"\r\n") if line.lower().startswith(b"date:")] == [b"Date: Tue, 01 Jan 2030 00:00:00 GMT"]
    assert len([line for line in plain.split(b"\r\n") if line.lower().startswith(b"date:")]) == 1


def test_after_max_requests_calls_the_next_connection_goes_to_a_new_worker():
    """Recycled at its max_requests-th call, not at its next look at the clock: no worker serves one more."""
    with start(EDGE, "exits", SERVER_MAX_REQUESTS="3", SERVER_WORKERS="1") as server:
        answers = [exchange(server.port, get("/", b"Connection: close\r\n"), timeout=10) for _ in range(8)]
    pids = Counter(answer.rsplit(b"worker ", 1)[1] for answer in answers)
    assert len(pids) >= 2 and max(pids.values()) <= 3, pids


def test_a_worker_replaced_after_max_requests_answers_an_idle_keep_alive_connection_that_sends_soon():
    """An idle keep-alive connection of a recycled worker was closed at once: a client sending on it then (a proxy
    reusing its connections under load) lost its request. It is kept open RECYCLING_LINGER seconds and answered, closing."""
    with start(EDGE, "exits", SERVER_MAX_REQUESTS="30", SERVER_WORKERS="1") as server:
        kept, busy = connect(server.port), connect(server.port)
        try:
            first = one_answer(kept, get("/"))
            for _ in range(60):  # calls on another connection until the worker is replaced: its answer says close
                try:
                    if b"\r\nConnection: close\r\n" in one_answer(busy, get("/")):
                        break
                except (AssertionError, OSError):  # closed under the request: the worker's drain did not wait
                    break
            time.sleep(0.2)  # the drain has begun
            kept.sendall(get("/"))
            answer, _ = until_closed(kept)
        finally:
            kept.close()
            busy.close()
    assert status_of(answer) == 200, answer
    assert b"\r\nConnection: close\r\n" in answer
    assert answer.rsplit(b"worker ", 1)[1] == first.rsplit(b"worker ", 1)[1]  # the old worker answered


def test_sys_exit_in_a_call_closes_its_connection_and_a_new_worker_serves_the_next():
    with start(EDGE, "exits", SERVER_WORKERS="1") as server:
        before = exchange(server.port, get("/", b"Connection: close\r\n"))
        assert exchange(server.port, get("/sys-exit/3", b"Connection: close\r\n")) == b""
        after = exchange(server.port, get("/", b"Connection: close\r\n"), timeout=10)
        assert status_of(after) == 200 and after.rsplit(b" ", 1)[1] != before.rsplit(b" ", 1)[1]
        assert server.process.poll() is None, "the server goes on"


def test_sys_exit_in_a_call_on_the_loop_ends_its_worker_as_on_a_thread():
    with start(EDGE, "exits_async", SERVER_WORKERS="1") as server:
        before = exchange(server.port, get("/", b"Connection: close\r\n"))
        assert exchange(server.port, get("/sys-exit/3", b"Connection: close\r\n")) == b""
        after = exchange(server.port, get("/", b"Connection: close\r\n"), timeout=10)
        assert status_of(after) == 200 and after.rsplit(b" ", 1)[1] != before.rsplit(b" ", 1)[1]
        assert server.process.poll() is None, "the server goes on"


#: What the edge replaces: no module of ours may import a concrete gunicorn worker, gunicorn's parser or uvicorn's protocols.
FORBIDDEN = ("gunicorn.workers.gthread", "gunicorn.http", "uvicorn.protocols")


def forbidden_imports(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else [node.module or ""] if isinstance(node, ast.ImportFrom) else []
        found += [name for name in names if any(name == banned or name.startswith(banned + ".") for banned in FORBIDDEN)]
    return found


def test_no_module_imports_a_concrete_gunicorn_worker_gunicorns_parser_or_uvicorns_protocols():
    offending = {
        str(path.relative_to(REPO)): found
        for root in ("funcwsgi", "sdk", "bench")
        for path in sorted((REPO / root).rglob("*.py"))
        if (found := forbidden_imports(path))
    }
    assert offending == {}


def test_a_forbidden_import_is_found(tmp_path):
    module = tmp_path / "module.py"
    module.write_text("import gunicorn.http.wsgi\nfrom uvicorn.protocols.http import h11_impl\nfrom gunicorn.workers import base\n")
    assert forbidden_imports(module) == ["gunicorn.http.wsgi", "uvicorn.protocols.http"]
