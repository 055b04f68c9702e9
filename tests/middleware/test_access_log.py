"""The access log's direct JSON path writes exactly the line the logging path writes."""

from __future__ import annotations

import io
import json
import logging

import pytest

from funcwsgi import logs
from funcwsgi.config import Config
from funcwsgi.environ import REQUEST_ID_KEY
from funcwsgi.middleware.access_log import AccessLogMiddleware


def hello(environ, start_response):
    start_response("201 Created", [("Content-Type", "text/plain")])
    return [b"hello"]


@pytest.fixture
def only_our_handler(monkeypatch):
    """The root logger as a server has it: our JSON handler alone, writing to a buffer.

    Call the result inside the test: the test runner adds its capturing
    handlers to the root logger after the fixtures ran.
    """
    stream = io.StringIO()
    handler = logs.build_handler(Config.from_env({"FUNC_NAME": "orders", "FUNC_NAMESPACE": "shop"}), stream)

    def install() -> io.StringIO:
        root = logging.getLogger()
        monkeypatch.setattr(root, "handlers", [handler])
        monkeypatch.setattr(root, "level", logging.INFO)
        monkeypatch.setattr(logs, "_installed", handler)
        return stream

    return install


def call(layer: AccessLogMiddleware) -> None:
    environ = {"REQUEST_METHOD": "POST", "SCRIPT_NAME": "/fn", "PATH_INFO": "/orders", REQUEST_ID_KEY: "rid-1"}
    list(layer(environ, lambda status, headers, exc_info=None: None))


def test_direct_line_equals_the_logging_line(only_our_handler):
    stream = only_our_handler()
    direct = AccessLogMiddleware(hello)
    assert direct.direct is not None
    through_logging = AccessLogMiddleware(hello)
    through_logging.direct = None
    call(direct)
    call(through_logging)
    first, second = (json.loads(line) for line in stream.getvalue().splitlines())
    for record in (first, second):
        record.pop("timestamp")
        record.pop("duration_ms")
    assert list(first) == list(second) and first == second
    assert first == {
        "level": "INFO", "logger": "funcwsgi.access", "message": "POST /fn/orders 201", "function": "orders", "namespace": "shop",
        "method": "POST", "path": "/fn/orders", "status": 201, "bytes": 5, "request_id": "rid-1",
    }


def test_any_other_handler_or_filter_means_the_logging_path(only_our_handler, monkeypatch):
    only_our_handler()
    access = logging.getLogger("funcwsgi.access")
    monkeypatch.setattr(access, "handlers", [logging.NullHandler()])
    assert AccessLogMiddleware(hello).direct is None
    monkeypatch.setattr(access, "handlers", [])
    monkeypatch.setattr(access, "filters", [logging.Filter("x")])
    assert AccessLogMiddleware(hello).direct is None


def test_without_our_handler_the_logging_path(monkeypatch):
    monkeypatch.setattr(logs, "_installed", None)
    assert AccessLogMiddleware(hello).direct is None


def test_level_above_info_silences_the_direct_path(only_our_handler, monkeypatch):
    stream = only_our_handler()
    monkeypatch.setattr(logging.getLogger("funcwsgi.access"), "level", logging.WARNING)
    logging.getLogger("funcwsgi.access").manager._clear_cache()
    call(AccessLogMiddleware(hello))
    logging.getLogger("funcwsgi.access").manager._clear_cache()
    assert stream.getvalue() == ""


def test_a_stream_that_fails_before_its_first_byte_is_logged_500_as_it_is_answered(caplog):
    """The errors layer answers such a stream 500 (funcwsgi/middleware/server_errors.py); the log says what the client got."""
    from funcwsgi.middleware.server_errors import ErrorMiddleware

    def failing(environ, start_response):
        start_response("200 OK", [("Content-Type", "text/plain")])

        def body():
            raise RuntimeError("boom")
            yield b"never"

        return body()

    def cut(environ, start_response):
        start_response("200 OK", [("Content-Type", "text/plain")])

        def body():
            yield b"first"
            raise RuntimeError("boom")

        return body()

    environ = {"REQUEST_METHOD": "GET", "PATH_INFO": "/x", REQUEST_ID_KEY: "rid-1"}
    caplog.set_level(logging.INFO, logger="funcwsgi.access")
    answer = ErrorMiddleware(AccessLogMiddleware(failing))(dict(environ), lambda status, headers, exc_info=None: None)
    assert b"".join(answer) == b"Internal Server Error"
    cut_body = ErrorMiddleware(AccessLogMiddleware(cut))(dict(environ), lambda status, headers, exc_info=None: None)
    with pytest.raises(RuntimeError):
        list(cut_body)
    cut_body.close()  # type: ignore[attr-defined]
    statuses = [record.status for record in caplog.records if hasattr(record, "status")]
    assert statuses == [500, 200]
