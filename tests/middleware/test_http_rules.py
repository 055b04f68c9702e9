"""The HTTP rules layer in-process: bodiless responses, closed bodies, a buffering write()."""

from __future__ import annotations

import pytest

from funcwsgi.middleware.http_rules import HttpRulesMiddleware, valid_host
from funcwsgi.middleware.server_errors import ErrorMiddleware

from ..support.wsgi import StartResponse, drain


class Body:
    def __init__(self, chunks):
        self.chunks = chunks
        self.closed = False
        self.iterated = 0

    def __iter__(self):
        for chunk in self.chunks:
            self.iterated += 1
            yield chunk

    def close(self):
        self.closed = True


def run(app, method="GET", server_write=True):
    start = StartResponse(write=server_write)
    data = drain(HttpRulesMiddleware(app)({"REQUEST_METHOD": method}, start))
    return start, data


def test_head_discards_a_streamed_body_and_closes_it():
    body = Body([b"a", b"b"])

    def app(environ, start_response):
        start_response("200 OK", [("Content-Type", "text/plain")])
        return body

    seen, data = run(app, "HEAD")
    assert (seen.status, data, body.closed, body.iterated) == ("200 OK", b"", True, 0)


def test_head_starts_a_lazy_app_then_stops():
    steps = []

    def app(environ, start_response):
        start_response("200 OK", [])
        steps.append("started")
        yield b"a"
        steps.append("second chunk made")
        yield b"b"

    seen, data = run(app, "HEAD")
    assert (seen.status, data, steps) == ("200 OK", b"", ["started"])


@pytest.mark.parametrize("status", ["204 No Content", "304 Not Modified", "204"])
def test_bodiless_statuses_lose_content_headers_and_body(status):
    def app(environ, start_response):
        start_response(status, [("Content-Type", "text/plain"), ("Content-Length", "3"), ("ETag", "x")])
        return [b"abc"]

    seen, data = run(app)
    assert (seen.headers, data) == ([("ETag", "x")], b"")


def test_write_is_the_servers_when_it_gives_one():
    def app(environ, start_response):
        start_response("200 OK", [])(b"w")
        return [b"r"]

    seen, data = run(app)
    assert (seen.written, data) == ([b"w"], b"r")


def test_write_is_buffered_ahead_of_the_body_when_the_server_gives_none():
    def app(environ, start_response):
        write = start_response("200 OK", [])
        write(b"1")

        def rest():
            write(b"2")  # written while the body is iterated: still in order
            yield b"3"

        return rest()

    assert run(app, server_write=False)[1] == b"123"


def test_a_plain_response_passes_untouched():
    body = [b"x"]

    def app(environ, start_response):
        start_response("200 OK", [("Content-Length", "1")])
        return body

    assert HttpRulesMiddleware(app)({"REQUEST_METHOD": "GET"}, StartResponse()) is body


@pytest.mark.parametrize("status", ["100 Continue", "101 Switching Protocols", "103 Early Hints", "150 Unregistered", "199", "099 Low"])
def test_an_interim_status_as_the_answer_is_the_functions_error(status, caplog):
    """RFC 9110 section 15.2: a 1xx is interim and a final answer must follow; the function gave none: its 500."""

    def app(environ, start_response):
        start_response(status, [("Upgrade", "websocket"), ("Content-Length", "2")])
        return [b"hi"]

    start = StartResponse()
    data = drain(HttpRulesMiddleware(ErrorMiddleware(app))({"REQUEST_METHOD": "GET", "PATH_INFO": "/x"}, start))
    assert (start.statuses, data) == (["500 Internal Server Error"], b"Internal Server Error")
    assert "gave the interim status" in caplog.text


@pytest.mark.parametrize(
    "host",
    [
        "example.com",
        "example.com:8080",
        "[::1]:8080",
        "[::1]",
        "[fe80::1%25eth0]",
        "[v1.fe]",
        "127.0.0.1",
        "xn--bcher-kva.example",
        "localhost:",
        "internal_name.svc",
        "a~b!$&'()*+;=",
        "%41b",
        "",
    ],
)
def test_a_valid_host_is_served(host):
    assert valid_host(host)

    def app(environ, start_response):
        start_response("200 OK", [("Content-Length", "2")])
        return [b"ok"]

    start = StartResponse()
    assert drain(HttpRulesMiddleware(app)({"REQUEST_METHOD": "GET", "HTTP_HOST": host}, start)) == b"ok"
    assert start.status == "200 OK"


@pytest.mark.parametrize("host", ["a b", "x/y", "x@y", "x:abc", "x:1:2", "[::1", "::1", "x%zz", "x?y", "x#y", "x\\y", "caf\xe9"])
def test_a_host_that_is_no_host_is_refused_before_the_function(host):
    """RFC 9112 section 3.2: a Host with an invalid value is answered 400."""
    called = []

    def app(environ, start_response):
        called.append(True)
        start_response("200 OK", [])
        return [b"ok"]

    start = StartResponse()
    data = drain(HttpRulesMiddleware(app)({"REQUEST_METHOD": "GET", "HTTP_HOST": host}, start))
    assert (start.status, called, data) == ("400 Bad Request", [], b"the request's Host field is not a host and port")


def test_the_functions_connection_fields_are_dropped_and_a_length_said_twice_goes_once():
    def app(environ, start_response):
        start_response("200 OK", [("Transfer-Encoding", "chunked"), ("content-length", "2"), ("Connection", "close"), ("Content-Length", "2"), ("X-A", "1")])
        return [b"hi"]

    seen, data = run(app)
    assert (seen.headers, data) == ([("content-length", "2"), ("X-A", "1")], b"hi")
