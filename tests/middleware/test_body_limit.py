from __future__ import annotations

import io

import pytest

from funcwsgi.middleware.body_limit import BodyLimitMiddleware


def echo_size(environ, start_response):
    body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [str(len(body)).encode()]


def call(app, body: bytes, **environ):
    seen = {}

    def start_response(status, headers, exc_info=None):
        seen["status"] = status

    base = {"REQUEST_METHOD": "POST", "wsgi.input": io.BytesIO(body)}
    base.update(environ)
    response = app(base, start_response)
    try:
        return seen.get("status") or None, b"".join(response), seen
    finally:
        if hasattr(response, "close"):
            response.close()


@pytest.mark.parametrize(
    ("size", "environ", "status"),
    [
        pytest.param(10, {"CONTENT_LENGTH": "10"}, "200 OK", id="declared-at-the-limit"),
        pytest.param(11, {"CONTENT_LENGTH": "11"}, "413 Request Entity Too Large", id="declared-over"),
        pytest.param(10, {"HTTP_TRANSFER_ENCODING": "chunked"}, "200 OK", id="chunked-at-the-limit"),
        pytest.param(11, {"HTTP_TRANSFER_ENCODING": "chunked"}, "413 Request Entity Too Large", id="chunked-over"),
        pytest.param(11, {"wsgi.input_terminated": True}, "413 Request Entity Too Large", id="terminated-input-over"),
        pytest.param(0, {}, "200 OK", id="no-body"),
    ],
)
def test_bodies_over_the_limit_get_413_before_the_function_runs(size, environ, status):
    ran = []

    def inner(environ, start_response):
        ran.append(True)
        return echo_size(environ, start_response)

    app = BodyLimitMiddleware(inner, max_bytes=10)
    _, body, seen = call(app, b"x" * size, **environ)
    assert seen["status"] == status
    if status.startswith("413"):
        assert body == b"Request Entity Too Large: the request body is larger than 10 bytes"
        assert not ran
    else:
        assert body == str(size).encode()


def test_a_chunked_body_reaches_the_function_whole_with_a_content_length():
    app = BodyLimitMiddleware(echo_size, max_bytes=1 << 20)
    data = bytes(range(256)) * 1000
    seen = {}

    def inner(environ, start_response):
        seen["length"] = environ["CONTENT_LENGTH"]
        seen["data"] = environ["wsgi.input"].read()
        start_response("200 OK", [])
        return [b""]

    response = BodyLimitMiddleware(inner, max_bytes=1 << 20)(
        {"REQUEST_METHOD": "POST", "wsgi.input": io.BytesIO(data), "HTTP_TRANSFER_ENCODING": "chunked"}, lambda *a: None
    )
    response.close()
    assert seen == {"length": str(len(data)), "data": data}
    assert call(app, data, HTTP_TRANSFER_ENCODING="chunked")[1] == str(len(data)).encode()


def test_a_malformed_content_length_is_left_to_the_server():
    def inner(environ, start_response):
        start_response("200 OK", [])
        return [environ["CONTENT_LENGTH"].encode()]

    _, body, seen = call(BodyLimitMiddleware(inner, max_bytes=10), b"", CONTENT_LENGTH="lots")
    assert (seen["status"], body) == ("200 OK", b"lots")


def test_head_gets_no_body():
    _, body, seen = call(BodyLimitMiddleware(echo_size, max_bytes=1), b"xx", CONTENT_LENGTH="2", REQUEST_METHOD="HEAD")
    assert (seen["status"], body) == ("413 Request Entity Too Large", b"")


def test_in_the_stack_by_default_and_left_out_with_0(client_for):
    assert "body-limit" in client_for("hello").application.layers
    assert "body-limit" not in client_for("hello", server_max_body_size=0).application.layers
    client = client_for("req_res", server_max_body_size=5)
    assert client.post("/echo", data=b"12345").data == b"12345"
    assert client.post("/echo", data=b"123456").status_code == 413


def test_a_get_that_says_nothing_of_a_body_is_passed_through_unread():
    # gunicorn marks every request `wsgi.input_terminated`; a GET without
    # Content-Length or Transfer-Encoding has no body to spool.
    stream = io.BytesIO(b"")
    seen = {}

    def inner(environ, start_response):
        seen["input"] = environ["wsgi.input"]
        start_response("200 OK", [])
        return [b""]

    environ = {"REQUEST_METHOD": "GET", "wsgi.input": stream, "wsgi.input_terminated": True}
    BodyLimitMiddleware(inner, max_bytes=10)(environ, lambda *args: None)
    assert seen["input"] is stream and "CONTENT_LENGTH" not in environ


def test_the_spool_of_a_chunked_body_is_closed_with_the_response():
    spools = []

    def inner(environ, start_response):
        spools.append(environ["wsgi.input"])
        start_response("200 OK", [])
        return [b"ok"]

    environ = {"REQUEST_METHOD": "POST", "wsgi.input": io.BytesIO(b"x" * 10), "HTTP_TRANSFER_ENCODING": "chunked"}
    response = BodyLimitMiddleware(inner, max_bytes=100)(environ, lambda *a: None)
    assert not spools[0].closed  # the function, and layers inside, may still read it
    assert list(response) == [b"ok"]
    response.close()
    assert spools[0].closed


def test_the_spool_is_closed_when_the_app_raises():
    spools = []

    def inner(environ, start_response):
        spools.append(environ["wsgi.input"])
        raise RuntimeError("boom")

    environ = {"REQUEST_METHOD": "POST", "wsgi.input": io.BytesIO(b"x"), "HTTP_TRANSFER_ENCODING": "chunked"}
    with pytest.raises(RuntimeError):
        BodyLimitMiddleware(inner, max_bytes=100)(environ, lambda *a: None)
    assert spools[0].closed
