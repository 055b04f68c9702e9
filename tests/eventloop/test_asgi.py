"""The ASGI edge's environ, in process: what the layers read of an ASGI scope."""

from __future__ import annotations

import asyncio

from funcwsgi.environ import ASGI_SCOPE_KEY
from funcwsgi.eventloop.asgi import NO_BODY, AsgiInput, make_environ


async def _receive():  # never awaited by these tests: no body is read here
    return {"type": "http.request", "body": b"", "more_body": False}


def scope(**changes):
    base = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET", "scheme": "http",
        "path": "/", "raw_path": b"/", "query_string": b"", "root_path": "",
        "headers": [(b"host", b"127.0.0.1:8080")], "client": ("127.0.0.1", 5555), "server": ("127.0.0.1", 8080),
    }
    return {**base, **changes}


def test_the_pep_3333_keys_come_from_the_scope():
    environ = make_environ(scope(method="POST", path="/items", query_string=b"a=1&b=%20", headers=[
        (b"host", b"example.test"), (b"content-type", b"application/json"), (b"content-length", b"2"), (b"x-trace", b"t"),
    ]), _receive)
    assert {key: environ[key] for key in (
        "REQUEST_METHOD", "SCRIPT_NAME", "PATH_INFO", "QUERY_STRING", "SERVER_NAME", "SERVER_PORT", "SERVER_PROTOCOL",
        "REMOTE_ADDR", "REMOTE_PORT", "CONTENT_TYPE", "CONTENT_LENGTH", "HTTP_HOST", "HTTP_X_TRACE", "wsgi.url_scheme",
    )} == {
        "REQUEST_METHOD": "POST", "SCRIPT_NAME": "", "PATH_INFO": "/items", "QUERY_STRING": "a=1&b=%20",
        "SERVER_NAME": "127.0.0.1", "SERVER_PORT": "8080", "SERVER_PROTOCOL": "HTTP/1.1", "REMOTE_ADDR": "127.0.0.1",
        "REMOTE_PORT": "5555", "CONTENT_TYPE": "application/json", "CONTENT_LENGTH": "2", "HTTP_HOST": "example.test",
        "HTTP_X_TRACE": "t", "wsgi.url_scheme": "http",
    }
    assert "HTTP_CONTENT_TYPE" not in environ and "HTTP_CONTENT_LENGTH" not in environ
    assert environ[ASGI_SCOPE_KEY]["path"] == "/items"


def test_the_mount_point_is_taken_off_the_path_also_when_it_is_not_ascii():
    ascii_mount = make_environ(scope(root_path="/fn", path="/fn/items"), _receive)
    assert (ascii_mount["SCRIPT_NAME"], ascii_mount["PATH_INFO"]) == ("/fn", "/items")
    mounted = make_environ(scope(root_path="/café", path="/café/ünï"), _receive)
    # WSGI strings are bytes as latin-1: the UTF-8 of the mount point and of the rest, each re-encoded.
    assert mounted["SCRIPT_NAME"] == "/café".encode().decode("latin-1")
    assert mounted["PATH_INFO"] == "/ünï".encode().decode("latin-1")


def test_repeated_headers_are_joined_as_http_joins_them():
    environ = make_environ(scope(headers=[
        (b"cookie", b"a=1"), (b"cookie", b"b=2"), (b"accept", b"text/html"), (b"accept", b"application/json"),
    ]), _receive)
    assert environ["HTTP_COOKIE"] == "a=1; b=2"
    assert environ["HTTP_ACCEPT"] == "text/html,application/json"


def test_a_call_without_a_body_shares_the_empty_input_and_one_with_a_body_reads_it():
    assert make_environ(scope(), _receive)["wsgi.input"] is NO_BODY
    assert NO_BODY.read() == NO_BODY.readline() == b"" and NO_BODY.readlines() == [] and list(NO_BODY) == []
    assert type(make_environ(scope(headers=[(b"content-length", b"0")]), _receive)["wsgi.input"]) is NoBodyType
    chunks = [{"type": "http.request", "body": b"hel", "more_body": True}, {"type": "http.request", "body": b"lo", "more_body": False}]

    async def receive():
        return chunks.pop(0)

    for headers in ([(b"content-length", b"5")], [(b"transfer-encoding", b"chunked")]):
        chunks[:] = [{"type": "http.request", "body": b"hel", "more_body": True}, {"type": "http.request", "body": b"lo", "more_body": False}]
        stream = make_environ(scope(method="POST", headers=headers), receive)["wsgi.input"]
        assert type(stream) is AsgiInput
        assert asyncio.run(_read_in_bridge(stream)) == b"hello"


NoBodyType = type(NO_BODY)


async def _read_in_bridge(stream):
    from funcwsgi.eventloop.bridge import run_bridged

    return await run_bridged(stream.read)


def test_calls_do_not_share_what_one_of_them_changed_in_its_environ():
    first = make_environ(scope(headers=[(b"x-only-first", b"1")]), _receive)
    first["funcwsgi.mark"] = "first"
    first["SERVER_NAME"] = "changed"
    second = make_environ(scope(), _receive)
    assert "HTTP_X_ONLY_FIRST" not in second and "funcwsgi.mark" not in second
    assert second["SERVER_NAME"] == "127.0.0.1"


def test_a_call_on_the_loop_leaves_no_reference_cycles():
    from funcwsgi import make_app

    from ..handler.test_calling import _cyclic_garbage_per_call
    from ..support.paths import function_folder

    app = make_app(environ={}, handler_folder=function_folder("async_fn")).asgi
    sent = []

    async def send(message):
        sent.append(message)

    async def serve():
        await asyncio.create_task(app(scope(), _receive, send))  # a task per call, as servers run it

    def call():
        asyncio.run(serve())

    assert _cyclic_garbage_per_call(call, calls=20) == 0
    assert sent[-2]["status"] == 200 and b'"async": true' in sent[-1]["body"]
