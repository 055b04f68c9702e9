"""The HTTP/2 request checks, in process; tests/reliability/test_http2.py runs them behind real servers."""

from __future__ import annotations

import io
from typing import Any

import pytest

from funcwsgi.config import Config
from funcwsgi.middleware.http2_requests import Http2RequestsMiddleware
from funcwsgi.serving import SERVER_CALL_KEY
from funcwsgi.stack import LAYERS


def run(protocol: str, body: bytes = b"", max_body: int = 100, **fields: str) -> tuple[str, list[dict[str, Any]]]:
    calls: list[dict[str, Any]] = []

    def function(environ, start_response):
        calls.append({**environ, "body": environ["wsgi.input"].read()})
        start_response("200 OK", [])
        return [b"ok"]

    status: list[str] = []
    environ = {"REQUEST_METHOD": "POST", "SERVER_PROTOCOL": protocol, "wsgi.input": io.BytesIO(body), **fields}
    b"".join(Http2RequestsMiddleware(function, max_body)(environ, lambda line, headers, exc_info=None: status.append(line)))
    return status[0], calls


@pytest.mark.parametrize(
    "fields",
    [
        {"HTTP_CONNECTION": "close"},
        {"HTTP_KEEP_ALIVE": "5"},
        {"HTTP_PROXY_CONNECTION": "keep-alive"},
        {"HTTP_TRANSFER_ENCODING": "chunked"},
        {"HTTP_UPGRADE": "websocket"},
        {"HTTP_TE": "gzip"},
        {"HTTP_X_VALUE": " leading"},
        {"HTTP_X_VALUE": "trailing\t"},
        {"HTTP_X_VALUE": "a\r\nb"},
        {"HTTP_X_VALUE": "a\x00b"},
        {"CONTENT_TYPE": "text/plain "},
        {"CONTENT_LENGTH": "4"},  # the body has 3 bytes
        {"CONTENT_LENGTH": "2"},
        {"CONTENT_LENGTH": "-1"},
    ],
)
def test_a_malformed_http2_request_gets_400_and_no_call(fields):
    assert run("HTTP/2", b"abc", **fields) == ("400 Bad Request", [])


def test_requests_whose_server_checked_them_are_passed_on_untouched():
    """The server refused malformed streams itself (ServerCall.checks_http2): the layer checks nothing twice."""

    class Checked:
        checks_http2 = True

    body = io.BytesIO(b"abc")
    status, calls = run("HTTP/2", b"", HTTP_X_VALUE=" kept", **{SERVER_CALL_KEY: Checked(), "wsgi.input": body})
    assert status == "200 OK"
    assert (calls[0]["HTTP_X_VALUE"], calls[0]["wsgi.input"], calls[0]["body"]) == (" kept", body, b"abc")
    assert "CONTENT_LENGTH" not in calls[0]


def test_http1_requests_are_passed_on_untouched():
    """HTTP/1.1's rules are the server's: the layer does not look (edge whitespace is trimmed by HTTP/1.1 parsers)."""
    status, calls = run("HTTP/1.1", b"abc", CONTENT_LENGTH="4", HTTP_X_VALUE=" kept", HTTP_COOKIE="a=1;b=2")
    assert status == "200 OK"
    assert (calls[0]["HTTP_X_VALUE"], calls[0]["HTTP_COOKIE"], calls[0]["body"]) == (" kept", "a=1;b=2", b"abc")


def test_the_function_reads_exactly_the_declared_body():
    status, calls = run("HTTP/2", b"abcd", CONTENT_LENGTH="4", HTTP_TE="trailers")
    assert (status, calls[0]["body"]) == ("200 OK", b"abcd")


def test_a_body_without_a_content_length_gets_the_length_it_has():
    status, calls = run("HTTP/2", b"abcd")
    assert (status, calls[0]["CONTENT_LENGTH"], calls[0]["body"]) == ("200 OK", "4", b"abcd")


def test_a_body_the_client_broke_off_gets_400_and_no_call():
    class BrokenOff(io.BytesIO):
        interrupted = True  # as funcwsgi.eventloop.asgi.AsgiInput says after an http.disconnect

    calls: list[object] = []
    status: list[str] = []
    environ = {"REQUEST_METHOD": "POST", "SERVER_PROTOCOL": "HTTP/2", "wsgi.input": BrokenOff(b"ab")}
    layer = Http2RequestsMiddleware(lambda environ, start_response: calls.append(environ) or [], 100)
    b"".join(layer(environ, lambda line, headers, exc_info=None: status.append(line)))
    assert (status, calls) == (["400 Bad Request"], [])


def test_a_body_announced_over_the_limit_is_left_to_the_body_limit_layer():
    status, calls = run("HTTP/2", b"abc", max_body=2, CONTENT_LENGTH="3")
    assert (status, calls[0]["body"]) == ("200 OK", b"abc")


def test_split_cookie_fields_are_joined_with_a_semicolon_and_a_space():
    status, calls = run("HTTP/2", HTTP_COOKIE="a=1;b=2; c=3")
    assert (status, calls[0]["HTTP_COOKIE"]) == ("200 OK", "a=1; b=2; c=3")


def test_the_layer_is_in_the_stack_only_when_http2_is_served():
    (layer,) = [layer for layer in LAYERS if layer.cls is Http2RequestsMiddleware]
    assert layer.enabled(Config.from_env({}))  # gunicorn, the default, serves HTTP/2 by default
    assert not layer.enabled(Config.from_env({"SERVER_HTTP2": "false"}))
    assert not layer.enabled(Config.from_env({"SERVER_ADAPTER": "granian"}))
    assert layer.enabled(Config.from_env({"SERVER_HTTP2": "true", "SERVER_ADAPTER": "granian"}))
