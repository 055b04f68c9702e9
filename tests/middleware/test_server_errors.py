from __future__ import annotations

import pytest
from werkzeug.test import Client

from funcwsgi.middleware.server_errors import ErrorMiddleware

from ..support.wsgi import StartResponse


def test_exception_becomes_a_plain_500_without_details(client_for, caplog):
    response = client_for("raises").post("/orders")
    assert response.status_code == 500
    assert response.data == b"Internal Server Error"
    assert response.headers["Content-Type"] == "text/plain; charset=utf-8"
    assert b"hunter2" not in response.data
    assert "Function failed on POST /orders" in caplog.text
    assert "RuntimeError: secret database password is hunter2" in caplog.text


def test_the_server_keeps_serving_after_a_failure(client_for):
    client = client_for("raises")
    assert client.get("/").status_code == 500
    assert client.get("/healthz").status_code == 200
    assert client.get("/").status_code == 500


def test_failure_after_start_response_replaces_the_headers():
    def inner(environ, start_response):
        start_response("200 OK", [("X-Partial", "1")])
        raise ValueError("late")

    response = Client(ErrorMiddleware(inner)).get("/")
    assert response.status_code == 500
    assert "X-Partial" not in response.headers


def test_failure_while_streaming_is_logged_and_aborts(client_for, caplog):
    client = client_for("streaming")
    assert client.get("/").data == b"first\nsecond\n"
    with pytest.raises(ValueError, match="broke mid-stream"):
        client.get("/fail").data  # noqa: B018 - the server would close the connection here
    assert "Function failed while streaming GET /fail" in caplog.text


def test_streamed_body_is_closed():
    closed = []

    class Body:
        def __iter__(self):
            yield b"x"

        def close(self):
            closed.append(True)

    def inner(environ, start_response):
        start_response("200 OK", [])
        return Body()

    response = Client(ErrorMiddleware(inner)).get("/")
    assert response.data == b"x"
    response.close()
    assert closed == [True]


# Cases the mutation run (make mutation, docs/reliability.md) found untested.


def _strict_call(app, method: str, **environ):
    """Call ``app`` as a strict server does: a second start_response without exc_info is refused."""
    start = StartResponse(strict=True)
    # Decoded, as a server parses the method off the wire: not the interned literal.
    base = {"REQUEST_METHOD": method.encode().decode(), "PATH_INFO": "/", **environ}
    body = b"".join(app(base, start))
    return [(status, headers, exc_info is not None) for status, headers, exc_info in start.calls], body


def _raises(environ, start_response):
    raise RuntimeError("the database is down")


@pytest.mark.parametrize("method", ["GET", "POST", "HEAD", "DELETE"])
def test_the_500_has_its_body_except_for_head(method):
    """Mutations caught: ``== "HEAD"`` turned into ``<``, ``<=`` or ``is`` in the 500's body choice."""
    seen, body = _strict_call(ErrorMiddleware(_raises), method)
    assert seen == [("500 Internal Server Error", [("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", "21")], False)]
    assert body == (b"" if method == "HEAD" else b"Internal Server Error")


def test_the_500_carries_the_calls_request_id_and_none_without_one():
    """Mutation caught: ``if request_id is not None`` inverted (the id left off, or ``None`` sent)."""
    seen, _ = _strict_call(ErrorMiddleware(_raises), "GET", **{"funcwsgi.request_id": "req-7"})
    assert ("X-Request-Id", "req-7") in seen[0][1]
    seen, _ = _strict_call(ErrorMiddleware(_raises), "GET")
    assert [name for name, _ in seen[0][1]] == ["Content-Type", "Content-Length"]


def test_a_strict_server_gets_the_500_with_exc_info_after_the_functions_headers():
    """Mutation caught: the layer not catching the server's refusal of a second start_response."""

    def inner(environ, start_response):
        start_response("200 OK", [("X-Partial", "1")])
        raise ValueError("late")

    seen, body = _strict_call(ErrorMiddleware(inner), "GET")
    assert [(status, replaced) for status, _, replaced in seen] == [("200 OK", False), ("500 Internal Server Error", True)]
    assert body == b"Internal Server Error"


def test_a_failure_while_streaming_is_logged_with_its_traceback(client_for, caplog):
    """Mutation caught: ``exc_info=True`` turned ``False`` in the streaming failure's log record."""
    with pytest.raises(ValueError):
        client_for("streaming").get("/fail").data  # noqa: B018
    record = next(r for r in caplog.records if r.getMessage() == "Function failed while streaming GET /fail; closing the connection")
    assert record.exc_info is not None and record.exc_info[0] is ValueError


# A streamed body that fails before its first chunk that is not empty: nothing of the answer went out, so it is the
# function's 500 (docs/handler-api.md § Errors); on every server: tests/adapters/test_stream_failures.py.


def _streams(*chunks, closed=None):
    def app(environ, start_response):
        start_response("200 OK", [("X-Partial", "1")])

        def body():
            try:
                for chunk in chunks:
                    if isinstance(chunk, Exception):
                        raise chunk
                    yield chunk
            finally:
                if closed is not None:
                    closed.append(True)

        return body()

    return app


@pytest.mark.parametrize(
    "chunks",
    [(RuntimeError("boom"),), (b"", b"", RuntimeError("boom")), (5,), (None,), ({"a": 1},), ("text",)],
    ids=["raises", "after-empty-chunks", "int", "none", "dict", "str"],
)
def test_a_stream_failing_before_its_first_chunk_is_a_500_logged_once(chunks, caplog):
    closed = []
    calls, body = _strict_call(ErrorMiddleware(_streams(*chunks, closed=closed)), "GET")
    assert body == b"Internal Server Error"
    assert calls[-1][0] == "500 Internal Server Error" and calls[-1][2]  # replacing the started head (exc_info)
    assert closed == [True]
    records = [record for record in caplog.records if record.name == "funcwsgi.errors"]
    assert [record.getMessage() for record in records] == ["Function failed on GET /"]


def test_the_first_chunk_is_sent_first_then_the_rest():
    calls, body = _strict_call(ErrorMiddleware(_streams(b"", b"one", b"", b"two")), "GET")
    assert body == b"onetwo"
    assert [status for status, _, _ in calls] == ["200 OK"]


def test_a_stream_failing_after_its_first_chunk_is_raised_to_the_server(caplog):
    body = ErrorMiddleware(_streams(b"one", ValueError("late")))({"REQUEST_METHOD": "GET", "PATH_INFO": "/"}, StartResponse())
    chunks = iter(body)
    assert next(chunks) == b"one"
    with pytest.raises(ValueError, match="late"):
        next(chunks)
    assert [record.getMessage() for record in caplog.records] == ["Function failed while streaming GET /; closing the connection"]


def test_a_head_request_s_body_is_not_run():
    ran = []

    def app(environ, start_response):
        start_response("200 OK", [])

        def body():
            ran.append(True)
            raise RuntimeError("boom")
            yield b""

        return body()

    ErrorMiddleware(app)({"REQUEST_METHOD": "HEAD", "PATH_INFO": "/"}, StartResponse())
    assert ran == []


def test_a_list_body_is_returned_as_it_is():
    answer = [b"whole"]

    def app(environ, start_response):
        start_response("200 OK", [])
        return answer

    assert ErrorMiddleware(app)({"REQUEST_METHOD": "GET", "PATH_INFO": "/"}, StartResponse()) is answer
