"""The edge's call runner in-process: a call's environ, and the checks a response head passes on the call's side."""

from __future__ import annotations

import asyncio
import io
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from funcwsgi import make_app
from funcwsgi.adapters.gunicorn.calls import (
    CHECKED_FIELDS,
    CHECKED_FIELDS_LIMIT,
    CallRunner,
    ExchangeCall,
    address_fields,
    check_head,
    make_environ,
    roomy,
)
from funcwsgi.middleware.server_errors import ErrorMiddleware
from funcwsgi.response import send
from funcwsgi.serving import SERVER_CALL_KEY
from funcwsgi.stack import inner

from ...support.edge_client import edge_client

BASE = {"SCRIPT_NAME": "", "wsgi.url_scheme": "http"}


class Exchange:
    """The fields of an exchange make_environ reads."""

    def __init__(self, target: bytes, headers: list[tuple[bytes, bytes]], *, peer=("10.0.0.7", 51000), server=("127.0.0.1", 8080)):
        self.method = "GET"
        self.target = target
        self.http_version = "1.1"
        self.headers = headers
        self.peer = peer
        self.address = address_fields(server, peer)
        self.body_skipped = False

    def body(self):
        return io.BytesIO(b"payload")


@pytest.fixture
def runner() -> Iterator[Any]:
    """The edge's call runner for a function that answers through a raw WSGI app it returns, by path."""
    produced: list[bytes] = []

    def streamed(environ, start_response):
        start_response("200 OK", [("Content-Type", "text/plain")])
        for chunk in (b"one", b"two", b"three"):
            produced.append(chunk)
            yield chunk

    def empty(environ, start_response):
        start_response("204 No Content", [("Content-Type", "text/plain"), ("Content-Length", "0"), ("X-Kept", "1")])
        return [b"dropped"]

    def main(req):
        return streamed if req.path == "/streamed" else empty

    loop = asyncio.new_event_loop()
    made = CallRunner(make_app(main, environ={}), 1, loop, 1.0)
    made.produced = produced
    try:
        yield made
    finally:
        made.shutdown()
        loop.close()


def serve(runner: Any, method: str, target: bytes) -> tuple[Any, list[tuple[Any, ...]]]:
    exchange = Exchange(target, [])
    exchange.method = method
    sent: list[tuple[Any, ...]] = []
    taken = ExchangeCall(exchange, lambda *piece: sent.append(piece[1:]))
    body = runner.call_wsgi(taken, make_environ(runner.base_environ, exchange))
    return (None if body is None else (taken.status, taken.headers, body)), sent


def test_the_edge_calls_the_stack_without_its_http_and_http2_layers_and_does_their_work_itself(runner):
    service = runner.service
    assert service.layers[:4] == ["http", "errors", "http2", "request-id"]
    errors = runner.call_stack.__self__
    assert type(errors) is ErrorMiddleware and errors is not inner(service.wsgi)  # a copy: the service's stack is unchanged
    assert errors.app == inner(inner(inner(service.wsgi))).__call__  # the request-id layer
    assert ExchangeCall.keeps_http_rules and ExchangeCall.checks_http2
    assert runner.base_environ["funcwsgi.config"] is service.config


def test_a_head_call_runs_a_streamed_body_only_until_its_answer_starts(runner):
    answer, sent = serve(runner, "HEAD", b"/streamed")
    assert answer is None and [(status, body, end) for status, _, body, end in sent] == [("200 OK", b"", True)]
    assert runner.produced == [b"one"], "the generator ran past the start of its answer"


def test_a_204_answer_has_no_body_and_no_content_fields(runner):
    answer, sent = serve(runner, "GET", b"/empty")
    status, headers, body = answer
    assert (status, body, sent) == ("204 No Content", [], [])
    assert [name for name, _ in headers] == ["X-Kept", "X-Request-Id"]


def test_the_environ_holds_the_request_line_addresses_and_headers():
    headers = [(b"host", b"example.test"), (b"cookie", b"a=1"), (b"cookie", b"b=2"), (b"x-many", b"1"), (b"x-many", b"2")]
    environ = make_environ(BASE, Exchange(b"/caf%C3%A9/x?q=1&r=%20", headers))
    assert {key: environ[key] for key in environ if key != "wsgi.input"} == {
        **BASE,
        "REQUEST_METHOD": "GET",
        "PATH_INFO": "/caf\xc3\xa9/x",
        "QUERY_STRING": "q=1&r=%20",
        "RAW_URI": "/caf%C3%A9/x?q=1&r=%20",
        "REQUEST_URI": "/caf%C3%A9/x?q=1&r=%20",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "8080",
        "REMOTE_ADDR": "10.0.0.7",
        "REMOTE_PORT": "51000",
        "HTTP_HOST": "example.test",
        "HTTP_COOKIE": "a=1; b=2",
        "HTTP_X_MANY": "1,2",
    }
    assert environ["wsgi.input"].read() == b"payload"
    assert BASE == {"SCRIPT_NAME": "", "wsgi.url_scheme": "http"}, "the shared base is copied, never changed"


@pytest.mark.parametrize(
    ("target", "path", "query"),
    [
        pytest.param(b"/plain", "/plain", "", id="no-query"),
        pytest.param(b"/x?", "/x", "", id="empty-query"),
        pytest.param(b"/a%2Fb", "/a/b", "", id="escaped-no-query"),
    ],
)
def test_the_path_and_query_of_a_target(target, path, query):
    environ = make_environ(BASE, Exchange(target, []))
    assert (environ["PATH_INFO"], environ["QUERY_STRING"], environ["RAW_URI"]) == (path, query, target.decode())


def test_a_calls_environ_takes_a_requests_keys_without_growing_its_table(runner):
    """Mutation caught: a base not made roomy (a call's environ, copied from it, grew twice: about 1,600 instructions)."""
    base = runner.base_environ
    assert roomy(dict(base)) == base
    environ = make_environ(base, Exchange(b"/", [(b"host", b"example.test")]))
    size = sys.getsizeof(environ)
    environ.update((f"HTTP_X_FIELD_{n}", "value") for n in range(10))  # a dozen fields in all, as behind a proxy
    environ.update(dict.fromkeys(("funcwsgi.request_id", "funcwsgi.cancellation", "funcwsgi.deadline", "werkzeug.request")))
    assert sys.getsizeof(environ) == size


def test_without_addresses_the_environ_names_localhost():
    environ = make_environ(BASE, Exchange(b"/", [], peer=None, server=None))
    assert (environ["SERVER_NAME"], environ["SERVER_PORT"]) == ("localhost", "80")
    assert "REMOTE_ADDR" not in environ and "REMOTE_PORT" not in environ


@pytest.mark.parametrize(
    ("status", "headers", "line"),
    [
        pytest.param("200 OK", [("Content-Type", "text/plain"), ("X-Name", "caf\xe9")], "200 OK", id="latin-1"),
        # RFC 9112 section 4: status-line = HTTP-version SP status-code SP [ reason-phrase ]: the space stays.
        pytest.param("204", [], "204 ", id="no-reason"),
        pytest.param("204 ", [], "204 ", id="empty-reason"),
        pytest.param("599 Whatever Reason", [("X", "")], "599 Whatever Reason", id="any-code"),
        pytest.param("200 OK", [("Content-Length", "007"), ("content-length", "7")], "200 OK", id="same-length-twice"),
        pytest.param("200 OK", [("X-Token!#$%&'*+.^_`|~", "1")], "200 OK", id="every-token-char"),
    ],
)
def test_a_head_the_wire_can_carry_passes(status, headers, line):
    assert check_head(status, headers) == line


@pytest.mark.parametrize(
    ("status", "headers", "why"),
    [
        pytest.param("200 OK", [("X-Euro", "\u20ac")], "not latin-1", id="not-latin-1"),
        pytest.param("200 OK", [("X-Split", "a\r\nInjected: 1")], "'X-Split' holds a line break", id="value-crlf"),
        pytest.param("200 OK", [("X-Nul", "a\0b")], "'X-Nul' holds a line break or NUL", id="value-nul"),
        pytest.param("200 OK\r\nInjected: 1", [], "status holds a line break", id="status-crlf"),
        pytest.param("OK", [], "not three digits", id="status-no-code"),
        pytest.param("20 OK", [], "not three digits", id="status-short-code"),
        pytest.param("2000 OK", [], "not three digits", id="status-long-code"),
        pytest.param("\xb200 OK", [], "not three digits", id="status-superscript-digit"),
        pytest.param("200 OK", [("X-Three", "a", "b")], None, id="not-a-pair"),
        pytest.param("200 OK", [("X-Number", 1)], "not a \\(name, value\\) pair of str", id="value-not-str"),
        # RFC 9110 section 15.2: a 1xx is interim, never an answer (the runtime's own lines too: answer_fields).
        pytest.param("100", [], "interim status", id="interim-100"),
        pytest.param("199 Whatever", [], "interim status", id="interim-199"),
        pytest.param("099 Low", [], "interim status", id="below-100"),
        # RFC 9110 section 8.6: Content-Length = 1*DIGIT, and several must agree; int() takes more.
        *(
            pytest.param("200 OK", [("Content-Length", value)], "is not a number of digits", id=f"length-{value!r}")
            for value in ("-1", "+5", " 5", "5 ", "0_5", "0x5", "\xb2", "")
        ),
        pytest.param("200 OK", [("Content-Length", "3"), ("Content-Length", "5")], "Content-Length fields differ", id="lengths-differ"),
        # RFC 9110 section 5.1: field-name = token.
        *(
            pytest.param("200 OK", [("X-Kept", "1"), (name, "v")], "is not a token", id=f"name-{name!r}")
            for name in ("X Bad", "X-A: injected", "", "X(", "X\tTab", "caf\xe9")
        ),
    ],
)
def test_a_head_the_wire_cannot_carry_is_refused_on_the_calls_side(status, headers, why):
    with pytest.raises(ValueError, match=why):
        check_head(status, headers)


def test_fields_found_well_formed_pass_again_at_once_and_a_refused_one_is_refused_every_time():
    """Mutation caught: the fields kept before their check (a refused field would pass the second time)."""
    check_head("200 OK", [("X-Kept", "1")])
    assert ("X-Kept", "1") in CHECKED_FIELDS
    for _ in range(2):
        with pytest.raises(ValueError, match="'X-Split' holds a line break"):
            check_head("200 OK", [("X-Kept", "1"), ("X-Split", "a\r\nInjected: 1")])
    assert ("X-Split", "a\r\nInjected: 1") not in CHECKED_FIELDS
    with pytest.raises(ValueError, match="status holds a line break"):
        check_head("200 OK\r\nInjected: 1", [("X-Kept", "1")])  # known fields, a status the runtime never makes


def test_the_fields_kept_are_bounded():
    for number in range(CHECKED_FIELDS_LIMIT + 10):
        check_head("200 OK", [("Content-Length", str(number))])
    assert 0 < len(CHECKED_FIELDS) <= CHECKED_FIELDS_LIMIT


@pytest.mark.parametrize(
    ("also", "why"),
    [
        pytest.param(("X-Request-Id", "a\r\nInjected: 1"), "'X-Request-Id' holds a line break", id="crlf"),
        pytest.param(("X-Request-Id", "\u20ac"), "not latin-1", id="not-latin-1"),
        pytest.param(("X-Request-Id", "caf\xe9"), None, id="latin-1"),
    ],
)
def test_the_calls_own_field_is_checked_on_every_call(also, why):
    if why is None:
        check_head("200 OK", [("X-Kept", "1")], also)
        return
    with pytest.raises(ValueError, match=why):
        check_head("200 OK", [("X-Kept", "1")], also)
    assert also not in CHECKED_FIELDS


def test_no_layer_wraps_the_start_response_of_a_call_that_takes_its_answer(monkeypatch):
    """The request id and the metrics read and add to the edge's call (ServerCall.takes_answer) rather than wrap its
    start_response for every call: what the function's answer is started with is the call's bound method."""
    import funcwsgi.handler.calling as calling

    handed = []

    def sending(result, res, environ, start_response):
        handed.append((start_response, environ[SERVER_CALL_KEY]))
        return send(result, res, environ, start_response)

    monkeypatch.setattr(calling, "send", sending)
    service = make_app(lambda req: ("later", 503), environ={"SERVER_CALL_TIMEOUT": "0"})  # no watchdog (its own start_response)
    assert {"request-id", "metrics"} <= set(service.layers)
    for client in edge_client(service):
        answer = client.get("/", headers={"X-Request-Id": "taken"})
    ((start_response, call),) = handed
    assert start_response == call.start_response
    assert (answer.status_code, answer.headers.getlist("X-Request-Id"), call.status) == (503, ["taken"], "503 Service Unavailable")


def test_a_loop_calls_objects_go_when_it_ends_with_no_garbage_collection():
    """On the loop the request-id layer leaves the environ in the call's own context (ServerCall.own_context: no reset),
    which the call's task holds; the call drops its task as it ends, so the task, its context, the environ and the call
    go as soon as the call does (mutation caught: the task kept, a cycle each call that only the collector frees)."""
    import gc

    from funcwsgi.adapters.gunicorn.loop_calls import LoopCalls, LoopEdgeCall

    from ...support.edge_client import Exchange as Request
    from ...support.paths import function_folder

    loop = asyncio.new_event_loop()
    runner = CallRunner(make_app(environ={}, handler_folder=function_folder("async_waits_sometimes")), 1, loop, 1.0)
    runner.loop_calls = LoopCalls(runner)  # the function is async: its calls run on the loop

    def live_calls() -> int:
        return sum(type(found) is LoopEdgeCall for found in gc.get_objects())

    async def serve(path: str) -> Request:
        request = Request("GET", path, {"X-Request-Id": "own"}, b"")
        runner.start(request)
        while not request.done:
            await asyncio.sleep(0.001)
        await asyncio.sleep(0.01)  # the task's last step
        return request

    gc.collect()
    gc.disable()
    try:
        before = live_calls()
        answers = [loop.run_until_complete(serve(path)) for path in ("/wait", "/", "/wait")]
        assert live_calls() == before
    finally:
        gc.enable()
        runner.shutdown()
        loop.close()
    assert [answer.head[0] for answer in answers] == ["200 OK"] * 3
    assert all(("X-Request-Id", "own") in answer.head[1] for answer in answers)
