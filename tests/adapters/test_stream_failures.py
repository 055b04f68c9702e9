"""A streamed body that fails, on every server: before anything of it was sent it is the function's ``500``, after its
first chunk the connection is closed (docs/handler-api.md § Errors).

`funcwsgi serve` as a real subprocess per way of serving (each adapter, and the event-loop paths with an ``async
def`` function), serving tests/functions/stream_fails_first.
"""

from __future__ import annotations

import http.client
import socket
import time

import pytest

from funcwsgi.adapters import HTTP_ADAPTERS
from funcwsgi.middleware.server_errors import INTERNAL_ERROR

from ..support.processes import SERVE, Server
from ..support.processes import start as serve

#: The event-loop paths: the same function's async twin, on the adapters that serve it on a loop.
LOOP_PATHS = {"gunicorn-loop": "gunicorn", "granian-loop": "granian"}
SERVED_BY = [*HTTP_ADAPTERS, *LOOP_PATHS]
#: What every failure before the first chunk answers: funcwsgi's own reply, whatever the server.
ANSWERED = (500, INTERNAL_ERROR.body)


@pytest.fixture(scope="module", params=SERVED_BY)
def served(request):
    adapter = request.param
    module = "handler_async" if adapter in LOOP_PATHS else "handler"
    server = serve(SERVE, "stream_fails_first", SERVER_ADAPTER=LOOP_PATHS.get(adapter, adapter), SERVER_NUMTHREADS="4", HANDLER_MODULE_NAME=module)
    yield server
    server.stop()


def call(server: Server, path: str, method: str = "GET") -> tuple[int, bytes, http.client.HTTPMessage]:
    connection = http.client.HTTPConnection(server.host, server.port, timeout=10)
    try:
        connection.request(method, path)
        response = connection.getresponse()
        return response.status, response.read(), response.headers
    finally:
        connection.close()


@pytest.mark.parametrize("path", ["/", "/empty-first", "/int-first"], ids=["raises", "after-an-empty-chunk", "a-chunk-of-int"])
def test_a_stream_failing_before_its_first_chunk_is_answered_500(served, path):
    """Mutation caught: the errors layer returning the streamed body untouched (the edge closed the connection
    unanswered, one server sent 200 and a truncated body, others answered their own 500)."""
    status, body, headers = call(served, path)
    assert (status, body) == ANSWERED, served.describe()
    assert headers["Content-Type"] == "text/plain; charset=utf-8"
    assert "X-Request-Id" in headers
    assert call(served, "/ok")[:2] == (200, b"whole\n")  # the server keeps serving


def test_the_failure_is_logged_once_as_the_function_s(served):
    server = served
    before = len(server.stdout), len(server.stderr)
    assert call(server, "/logged-once")[:2] == ANSWERED
    server.wait_for_output("Function failed on GET /logged-once")
    time.sleep(0.2)  # room for a second record, were there one
    output = server.stdout[before[0] :] + server.stderr[before[1] :]
    assert output.count("RuntimeError: secret token hunter2") == 1, output
    assert "outside the function's stack" not in output
    assert "while streaming" not in output


def test_a_stream_failing_after_its_first_chunk_closes_the_connection(served, request):
    """The body never looks whole. One server sometimes drops what it had of the answer when the body fails
    (its own race, on the old code too): only the ending is checked there."""
    before = len(served.stdout), len(served.stderr)
    with pytest.raises((http.client.IncompleteRead, http.client.RemoteDisconnected)) as raised:
        call(served, "/late")
    if LOOP_PATHS.get(request.node.callspec.params["served"], request.node.callspec.params["served"]) != "granian":
        assert isinstance(raised.value, http.client.IncompleteRead) and raised.value.partial == b"first\n"
    served.wait_for_output("Function failed while streaming GET /late")
    time.sleep(0.2)
    output = served.stdout[before[0] :] + served.stderr[before[1] :]
    assert "outside the function's stack" not in output
    assert output.count("Function failed") == 1, output
    assert call(served, "/ok")[:2] == (200, b"whole\n")


def test_head_is_answered_without_running_the_body(served):
    status, body, _ = call(served, "/", "HEAD")
    assert (status, body) == (200, b"")


def test_nothing_of_the_exception_reaches_the_client(served):
    with socket.create_connection((served.host, served.port), timeout=10) as sock:
        sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    assert received.startswith(b"HTTP/1.1 500 Internal Server Error\r\n"), received
    assert b"hunter2" not in received and b"Traceback" not in received
