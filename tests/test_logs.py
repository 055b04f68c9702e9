"""JSON log records: fixed fields, the call's ids, extras, one record per traceback."""

from __future__ import annotations

import io
import json
import logging

import pytest

from funcwsgi import make_app
from funcwsgi.config import Config
from funcwsgi.logs import build_handler

from .support.paths import function_folder


@pytest.fixture
def captured():
    """Our own handler (JSON, with the call-fields filter) on the root logger, writing to a buffer."""
    stream = io.StringIO()
    handler = build_handler(Config.from_env({"FUNC_NAME": "orders", "FUNC_NAMESPACE": "shop"}), stream)
    root = logging.getLogger()
    root.addHandler(handler)
    level = root.level
    root.setLevel(logging.INFO)
    yield lambda: [json.loads(line) for line in stream.getvalue().splitlines()]
    root.removeHandler(handler)
    root.setLevel(level)


def test_function_records_carry_fields_extras_and_request_id(captured):
    from werkzeug.test import Client

    client = Client(make_app(environ={}, handler_folder=function_folder("observed")))
    client.get("/work", headers={"X-Request-Id": "rid-7"})
    records = captured()
    work = next(r for r in records if r["message"] == "got order")
    assert work["level"] == "INFO" and work["logger"] == "function"
    assert work["function"] == "orders" and work["namespace"] == "shop"
    assert work["order"] == 7 and work["request_id"] == "rid-7"
    assert work["timestamp"].endswith("Z") and work["timestamp"][10] == "T"
    assert "trace_id" not in work  # tracing is off


def test_one_access_record_per_call(captured):
    from werkzeug.test import Client

    client = Client(make_app(environ={"SERVER_ACCESS_LOG": "true"}, handler_folder=function_folder("observed")))
    client.get("/stream?x=1", headers={"X-Request-Id": "s-1"}, buffered=True)  # buffered: read and closed
    client.get("/fail", headers={"X-Request-Id": "f-1"})
    client.get("/healthz")
    access = [r for r in captured() if r["logger"] == "funcwsgi.access"]
    assert [(r["method"], r["path"], r["status"], r["bytes"]) for r in access] == [
        ("GET", "/stream", 200, 6),
        ("GET", "/fail", 500, len("Internal Server Error")),  # the errors layer's body
        ("GET", "/healthz", 200, 2),
    ]
    assert access[0]["request_id"] == "s-1" and access[1]["request_id"] == "f-1"
    assert all(r["duration_ms"] >= 0 for r in access)
    assert access[0]["message"] == "GET /stream 200"


def test_traceback_is_one_field_of_one_record(captured):
    from werkzeug.test import Client

    Client(make_app(environ={}, handler_folder=function_folder("observed"))).get("/fail")
    failures = [r for r in captured() if r["level"] == "ERROR"]
    assert len(failures) == 1
    assert failures[0]["message"] == "Function failed on GET /fail"
    assert "RuntimeError: the database is down" in failures[0]["exc_info"]


@pytest.mark.parametrize(
    "environ",
    [
        pytest.param({}, id="off-by-default"),
        pytest.param({"SERVER_ACCESS_LOG": "false"}, id="off"),
        pytest.param({"KYMA_INTERNAL_LOGGER_ENABLED": "false"}, id="kyma-name"),
    ],
)
def test_access_log_is_off_unless_asked_for(captured, environ):
    from werkzeug.test import Client

    client = Client(make_app(environ=environ, handler_folder=function_folder("observed")))
    assert "access-log" not in client.application.layers
    client.get("/")
    assert not [r for r in captured() if r["logger"] == "funcwsgi.access"]


@pytest.mark.parametrize("name", ["SERVER_ACCESS_LOG", "SERVER_INTERNAL_LOGGER", "KYMA_INTERNAL_LOGGER_ENABLED"])
def test_access_log_switched_on(name):
    from werkzeug.test import Client

    client = Client(make_app(environ={name: "true"}, handler_folder=function_folder("observed")))
    assert "access-log" in client.application.layers


def test_values_json_cannot_hold_are_written_as_text():
    stream = io.StringIO()
    logger = logging.Logger("isolated")
    logger.addHandler(build_handler(Config.from_env({}), stream))
    logger.warning("odd", extra={"when": __import__("datetime").date(2024, 1, 2), "thing": object()})
    record = json.loads(stream.getvalue())
    assert record["when"] == "2024-01-02" and record["thing"].startswith("<object object")


class Colour(__import__("enum").Enum):
    RED = 1
    BLUE = 2


def failure() -> RuntimeError:
    try:
        raise RuntimeError("the database is down")
    except RuntimeError as error:
        return error


@pytest.mark.parametrize(
    ("value", "written"),
    [
        pytest.param(b"\xff\x00ab", "_wBhYg==", id="bytes-url-safe-base64"),
        pytest.param(bytearray(b"x"), "eA==", id="bytearray"),
        pytest.param(failure(), "RuntimeError: the database is down", id="exception"),
        pytest.param(Colour.BLUE, 2, id="enum-member-its-value"),
        pytest.param(Colour, [1, 2], id="enum-class-its-values"),
        pytest.param(int, "int", id="class-its-name"),
        pytest.param(type("Broken", (), {"__str__": lambda self: 1 / 0, "__repr__": lambda self: "<broken>"})(), "<broken>", id="str-fails-repr"),
        pytest.param(type("Hopeless", (), {"__str__": lambda self: 1 / 0, "__repr__": lambda self: 1 / 0})(), "__could_not_encode__", id="nothing-works"),
        pytest.param({1: "a", None: "b"}, {"1": "a", "null": "b"}, id="keys-not-strings"),
    ],
)
def test_how_values_json_cannot_hold_are_written(value, written):
    stream = io.StringIO()
    logger = logging.Logger("isolated")
    logger.addHandler(build_handler(Config.from_env({}), stream))
    logger.warning("odd", extra={"value": value})
    assert json.loads(stream.getvalue())["value"] == written


def test_a_dict_message_gives_fields_and_a_traceback_field():
    stream = io.StringIO()
    logger = logging.Logger("isolated")
    logger.addHandler(build_handler(Config.from_env({"FUNC_NAME": "orders"}), stream))
    error = failure()
    logger.error({"order": 7}, exc_info=(type(error), error, error.__traceback__), stack_info=True)
    record = json.loads(stream.getvalue())
    assert list(record)[:6] == ["timestamp", "level", "logger", "message", "function", "namespace"]
    assert record["message"] == "" and record["order"] == 7 and record["function"] == "orders"
    assert record["exc_info"].startswith("Traceback") and record["exc_info"].endswith("RuntimeError: the database is down")
    assert record["stack_info"].startswith("Stack (most recent call last):")


def test_text_format_for_local_development():
    stream = io.StringIO()
    logger = logging.Logger("isolated")
    logger.addHandler(build_handler(Config.from_env({"SERVER_LOG_FORMAT": "text"}), stream))
    logger.info("hello %s", "you")
    line = stream.getvalue()
    assert line.endswith(" INFO isolated: hello you\n") and not line.startswith("{")


def test_a_repeating_problem_is_logged_once_per_burst(caplog, monkeypatch):
    from funcwsgi import logs

    now = [100.0]
    monkeypatch.setattr(logs.time, "monotonic", lambda: now[0])
    burst = logs.OncePerBurst(logging.getLogger("funcwsgi.test-burst"), seconds=10)
    with caplog.at_level(logging.WARNING, logger="funcwsgi.test-burst"):
        logged = [burst.warning("proxy %s down", "p") for _ in range(50)]
        now[0] += 10.5
        logged.append(burst.warning("proxy %s down", "p"))
    assert logged == [True] + [False] * 49 + [True]
    assert [record.getMessage() for record in caplog.records] == ["proxy p down", "proxy p down (49 more since the last report)"]
