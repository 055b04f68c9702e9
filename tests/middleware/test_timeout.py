"""middleware/timeout.py: the layer in the stack and what it passes through.

How a call is timed, on a pool thread or under the watchdog, is tested in tests/timeouts/.
"""

from __future__ import annotations

import pytest

from funcwsgi.middleware.timeout import TimeoutMiddleware

from ..support.wsgi import call


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


def test_an_exception_of_the_function_reaches_the_outer_layers():
    def inner(environ, start_response):
        raise ValueError("bad input")

    with pytest.raises(ValueError, match="bad input"):
        call(TimeoutMiddleware(inner, seconds=5, max_threads=2))


def test_in_the_stack_by_default_and_left_out_with_0(client_for):
    assert "timeout" in client_for("hello").application.layers
    assert "timeout" not in client_for("hello", server_call_timeout=0).application.layers


def test_sdk_get_request_works_inside_a_timed_call(client_for):
    client = client_for("no_args", server_call_timeout=5)
    assert client.get("/?id=7").json == {"id": "7", "again": "7"}
