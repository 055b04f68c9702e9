"""The HTTP rules layer in-process: bodiless responses, closed bodies, a buffering write()."""

from __future__ import annotations

import pytest

from funcwsgi.middleware.http_rules import HttpRulesMiddleware

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


@pytest.mark.parametrize("status", ["204 No Content", "304 Not Modified", "103 Early Hints", "150 Unregistered"])
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
