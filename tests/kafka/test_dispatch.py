from __future__ import annotations

import pytest

from funcwsgi import make_app
from funcwsgi.kafka.dispatch import Outcome, dispatch
from funcwsgi.kafka.records import Record, base_environ, record_environ
from tests.support.paths import function_folder

BASE = base_environ(8080)


def environ(value: bytes = b"x") -> dict:
    return record_environ(Record(topic="t", partition=0, offset=0, value=value), BASE)


def test_a_successful_call_is_ok_with_its_body():
    app = make_app(lambda req: f"got {req.get_data(as_text=True)}", environ={})
    outcome = dispatch(app, environ(b"hello"))
    assert outcome.ok
    assert outcome.status == 200
    assert outcome.body == b"got hello"
    assert outcome.error == ""


def test_the_function_sees_the_cloudevent_headers():
    app = make_app(lambda req: req.headers["ce-type"], environ={})
    assert dispatch(app, environ()).body == b"dev.knative.kafka.event"


def test_an_exception_is_a_retryable_failure_naming_it():
    app = make_app(environ={}, handler_folder=function_folder("raises"))
    outcome = dispatch(app, environ())
    assert not outcome.ok
    assert outcome.retryable
    assert outcome.status == 500
    assert outcome.error.startswith("500 Internal Server Error: ")
    assert "Error" in outcome.error.split(": ", 1)[1]


@pytest.mark.parametrize(
    ("status", "retryable"),
    [
        pytest.param(400, False, id="bad request is final"),
        pytest.param(404, False, id="not found is final"),
        pytest.param(413, False, id="too large is final"),
        pytest.param(408, True, id="timeout is retried"),
        pytest.param(429, True, id="throttled is retried"),
        pytest.param(503, True, id="unavailable is retried"),
    ],
)
def test_which_statuses_are_retried(status, retryable):
    app = make_app(lambda req: ("nope", status), environ={})
    outcome = dispatch(app, environ())
    assert not outcome.ok
    assert outcome.retryable is retryable
    assert outcome.error.startswith(f"{status} ")
    assert outcome.error.endswith(": nope")


def test_a_stream_that_fails_midway_is_a_failure():
    def main(req):
        def chunks():
            yield "partial"
            raise ValueError("broken stream")

        return chunks()

    outcome = dispatch(make_app(main, environ={}), environ())
    assert outcome.status == 500
    assert outcome.error == "ValueError: broken stream"


def test_an_app_that_never_starts_a_response_is_a_failure():
    outcome = dispatch(lambda environ, start_response: [], environ())
    assert outcome == Outcome(500, [], b"", "the application returned without starting a response")


def test_every_record_of_a_failing_call_carries_its_request_id():
    import io
    import json
    import logging

    from funcwsgi.config import Config
    from funcwsgi.logs import build_handler

    def main(req):
        logging.getLogger("orders").warning("about to fail")
        raise RuntimeError("the database is down")

    app = make_app(main, environ={})
    stream = io.StringIO()
    handler = build_handler(Config.from_env({}), stream)  # the runtime's own JSON handler
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        outcome = dispatch(app, environ())
    finally:
        root.removeHandler(handler)
    records = [json.loads(line) for line in stream.getvalue().splitlines()]
    request_id = dict(outcome.headers)["X-Request-Id"]
    own = [r for r in records if r["logger"] == "orders"]
    failure = [r for r in records if r["logger"] == "funcwsgi.errors"]
    assert len(own) == 1 and len(failure) == 1
    assert own[0]["request_id"] == request_id, "the function's own line"
    assert failure[0]["request_id"] == request_id, "the failure record"
    assert "RuntimeError: the database is down" in failure[0]["exc_info"]
