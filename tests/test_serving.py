"""The server interface (funcwsgi/serving.py): the layers, the timeouts and the event-loop code know
servers only through it, and what it answers for a call whose server gives nothing."""

from __future__ import annotations

import re
import socket
from pathlib import Path

import pytest

from funcwsgi import serving
from funcwsgi.adapters._socket_call import SocketCall
from funcwsgi.eventloop.asgi import LoopCall
from funcwsgi.middleware.reserved import PROBE_PATHS
from funcwsgi.serving import SERVER_CALL_KEY, TASK, THREAD

REPO = Path(__file__).resolve().parent.parent
#: The code that may know servers only through funcwsgi.serving.
SERVER_NEUTRAL = ("funcwsgi/middleware", "funcwsgi/timeouts", "funcwsgi/eventloop")
SERVER_NAMES = re.compile(r"gunicorn|granian|waitress|uvicorn", re.IGNORECASE)


def test_the_layers_timeouts_and_event_loop_code_name_no_server():
    """Comments and docstrings included: a server named there is a server the code was written around."""
    found = [
        f"{path.relative_to(REPO)}:{number}: {line.strip()}"
        for folder in SERVER_NEUTRAL
        for path in sorted((REPO / folder).rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if SERVER_NAMES.search(line)
    ]
    assert found == []


def test_the_check_sees_a_server_named_in_a_comment(tmp_path):
    assert SERVER_NAMES.search("# as Gunicorn does")
    assert not SERVER_NAMES.search("# as the default server does")


@pytest.fixture
def pair():
    server_end, client_end = socket.socketpair()
    client_end.settimeout(5)
    yield server_end, client_end
    server_end.close()
    client_end.close()


def test_without_a_server_call_the_client_counts_as_connected_and_the_peer_is_remote_addr():
    environ = {"REMOTE_ADDR": "10.0.0.7", "REMOTE_PORT": "5123"}
    assert serving.server_call(environ) is None
    assert serving.client_connected(environ) is True
    assert serving.peer(environ) == ("10.0.0.7", 5123)
    assert serving.peer({}) is None
    assert not serving.runs_on_loop(environ)


def test_without_a_server_call_work_after_the_response_runs_at_once():
    done = []
    serving.after_response({}, lambda: done.append(1))
    assert done == [1]


def test_work_after_the_response_that_fails_is_logged_and_the_rest_still_runs(caplog):
    done = []

    def failing():
        raise RuntimeError("boom")

    serving.run_after_response([failing, lambda: done.append(1)])
    assert done == [1]
    assert "Work after the response failed" in caplog.text


def test_a_socket_call_answers_now_and_shuts_the_socket_for_writing(pair):
    server_end, client_end = pair
    call = SocketCall(server_end)
    environ = {SERVER_CALL_KEY: call}
    assert serving.server_call(environ) is call and call.lent is THREAD and call.answers_now
    call.answer_now("408 Request Timeout", [("Content-Length", "2"), ("Connection", "close")], b"no")
    received = b""
    while chunk := client_end.recv(4096):
        received += chunk
    assert received == b"HTTP/1.1 408 Request Timeout\r\nContent-Length: 2\r\nConnection: close\r\n\r\nno"
    with pytest.raises(OSError):
        server_end.send(b"late")


def test_a_socket_call_tells_whether_its_client_is_still_connected(pair):
    server_end, client_end = pair
    environ = {SERVER_CALL_KEY: SocketCall(server_end)}
    assert serving.client_connected(environ) is True
    client_end.close()
    assert serving.client_connected(environ) is False


def test_a_client_that_sent_more_counts_as_connected_until_that_is_read(pair):
    """A peek cannot see past unread bytes: a pipelined request is not a goodbye."""
    server_end, client_end = pair
    client_end.sendall(b"GET /next HTTP/1.1\r\n")
    assert serving.client_connected({SERVER_CALL_KEY: SocketCall(server_end)}) is True


def test_a_socket_call_names_its_peer_from_the_socket():
    listener = socket.create_server(("127.0.0.1", 0))
    client = socket.create_connection(listener.getsockname())
    accepted, address = listener.accept()
    try:
        assert serving.peer({SERVER_CALL_KEY: SocketCall(accepted)}) == address
        assert serving.peer({SERVER_CALL_KEY: SocketCall(accepted, ("10.1.2.3", 99))}) == ("10.1.2.3", 99)
    finally:
        for sock in (accepted, client, listener):
            sock.close()


def test_a_socket_call_keeps_work_for_after_the_response_and_tells_its_lender_of_stuck_threads(pair):
    told = []

    class Lender:
        def call_stuck(self, key, extra_threads):
            told.append(("stuck", key, extra_threads))

        def call_back(self, key, extra_threads):
            told.append(("back", key, extra_threads))

    call = SocketCall(pair[0], None, Lender(), key="conn-1")
    serving.after_response({SERVER_CALL_KEY: call}, print)
    assert call.later == [print]
    call.thread_stuck(1)
    call.thread_back(0)
    assert told == [("stuck", "conn-1", 1), ("back", "conn-1", 0)]


def test_a_call_on_the_loop_is_lent_a_task_and_cannot_be_answered_early():
    call = LoopCall({"client": ("127.0.0.1", 4000)})
    environ = {SERVER_CALL_KEY: call}
    assert call.lent is TASK and not call.answers_now and serving.runs_on_loop(environ)
    assert serving.peer(environ) == ("127.0.0.1", 4000)
    assert serving.client_connected(environ) is True
    call.gone = True
    assert serving.client_connected(environ) is False
    with pytest.raises(OSError):
        call.answer_now("408 Request Timeout", [], b"")


def test_exempt_paths_are_the_probes_and_metrics_only_when_served_on_the_port(monkeypatch):
    from funcwsgi.config import Config

    assert serving.exempt_paths(Config.from_env({"SERVER_METRICS": "true"})) == PROBE_PATHS | {"/metrics"}
    assert serving.exempt_paths(Config.from_env({"SERVER_METRICS": "false"})) == PROBE_PATHS
