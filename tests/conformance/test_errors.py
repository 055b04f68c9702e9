"""C3: a failing function is a plain 500, its error only in the log, and the runtime keeps serving."""

from __future__ import annotations

import pytest

from ..support.sockets import connect, until_closed
from .kit import INTERNAL_ERROR, SECRET


def test_failure_is_a_plain_500(runtime):
    response = runtime.get("/raise")
    assert response.status_code == 500
    assert response.text == INTERNAL_ERROR
    assert response.headers["Content-Type"].split(";")[0] == "text/plain"
    assert response.headers["Content-Length"] == str(len(INTERNAL_ERROR))


def test_nothing_of_the_error_reaches_the_client(runtime):
    response = runtime.get("/raise")
    assert SECRET not in response.text
    assert all(SECRET not in value for value in response.headers.values())


def test_the_runtime_keeps_serving_after_failures(runtime):
    for _ in range(3):
        assert runtime.get("/raise").status_code == 500
    assert runtime.get("/hello").text == "hello"
    assert runtime.get("/healthz").status_code == 200


def test_the_error_and_its_stack_go_to_the_log(runtime):
    runtime.get("/raise")
    log = runtime.wait_for_log(SECRET)
    # The stack names the fixture's own file, where the error was thrown.
    assert str(runtime.module_file()) in log, log[-3000:]


def test_an_unsupported_return_value_is_a_500(runtime):
    response = runtime.get("/return/unsupported")
    assert (response.status_code, response.text) == (500, INTERNAL_ERROR)


def test_a_header_value_with_a_line_break_is_refused_with_a_500(runtime):
    response = runtime.get("/res/bad-header")
    assert (response.status_code, response.text) == (500, INTERNAL_ERROR)
    assert "Set-Cookie" not in response.headers and "X-Bad" not in response.headers


def test_a_failure_after_streaming_began_closes_the_connection(runtime):
    if runtime.launcher.protocol == "h2c":
        return _a_failure_after_streaming_began_resets_the_stream(runtime)
    # Read the raw answer: a complete chunked body ends with the zero-length chunk.
    with connect(runtime.process.port) as client:
        client.sendall(b"GET /return/stream-fail HTTP/1.1\r\nHost: kit\r\n\r\n")
        received, took = until_closed(client, 10)
    assert took < 10, f"the connection was left open: {received[-200:]!r}"
    assert SECRET.encode() not in received
    assert runtime.get("/hello").text == "hello"
    if not received:
        return  # closed before anything was sent (a server that buffers the first part): no answer at all
    head, _, body = received.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200"), received[:200]
    headers = dict(line.split(b": ", 1) for line in head.lower().split(b"\r\n")[1:] if b": " in line)
    if b"content-length" in headers:
        assert len(body) < int(headers[b"content-length"]), "the truncated body looks complete"
    else:
        assert headers.get(b"transfer-encoding") == b"chunked", head
        assert not body.endswith(b"0\r\n\r\n"), "the truncated body looks complete"


def _a_failure_after_streaming_began_resets_the_stream(runtime):
    """Over HTTP/2 a truncated body shows as the stream (or the connection) reset, never as END_STREAM."""
    from .h2c import H2cError
    from .kit import h2c_call

    with pytest.raises(H2cError) as failed:
        h2c_call("GET", runtime.url + "/return/stream-fail", timeout=10)
    assert SECRET.encode() not in failed.value.received
    assert runtime.get("/hello").text == "hello"
