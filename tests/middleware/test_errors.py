from __future__ import annotations

import pytest
from werkzeug.test import Client

from funcwsgi.middleware.errors import ErrorMiddleware


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
