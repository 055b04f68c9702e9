"""C8: every signature, detected once, and HANDLER_SIGNATURE overriding the detection; async functions."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import pytest

from .kit import INTERNAL_ERROR, SECRET, TIMEOUT_BODY, Runtime, serve, serve_many

LAUNCHES = {
    "async": ("async_main", {}),
    "req": ("req_only", {}),
    "none": ("no_args", {}),
    "event-context": ("legacy", {}),
    "override": ("override", {"HANDLER_SIGNATURE": "req"}),
}


@pytest.fixture(scope="module")
def served(launcher):
    with serve_many(launcher, LAUNCHES) as running:
        yield running


@pytest.fixture(scope="module")
def async_only(launcher) -> Iterator[Runtime]:
    """The async launch alone, for the timing tests: `make test` runs them in a phase of their own, where
    starting all five launches on each of the kit's runtimes for two tests took 27 core-seconds."""
    fixture, settings = LAUNCHES["async"]
    with serve(launcher, fixture, settings) as running:
        yield running


def test_main_req_gets_the_request_and_its_return_value_is_the_answer(served):
    response = served["req"].request("PATCH", "/some/where")
    assert response.json() == {"signature": "req", "method": "PATCH", "path": "/some/where"}


def test_main_without_parameters_gets_the_request_from_the_sdk(served):
    assert served["none"].request("DELETE", "/x").json() == {"signature": "none", "method": "DELETE", "path": "/x"}


def test_handler_signature_overrides_the_detection(served):
    assert served["override"].get("/forced").json() == {"path": "/forced", "second_is_missing": True}


def test_an_async_function_is_awaited(served):
    response = served["async"].get("/hello")
    assert response.json() == {"signature": "async", "path": "/hello"}
    assert response.headers["X-Async"] == "yes"


@pytest.mark.timing
def test_an_async_failure_is_a_plain_500_at_once(async_only):
    began = time.monotonic()
    response = async_only.get("/raise")
    assert (response.status_code, response.text) == (500, INTERNAL_ERROR)
    assert time.monotonic() - began < 1.0
    assert SECRET not in response.text
    async_only.wait_for_log(SECRET)


@pytest.mark.timing
@pytest.mark.slow("waits out a call timeout; granian then drains the cancelled call before it stops")
def test_an_awaited_call_past_the_timeout_gets_408_in_time(async_only):
    runtime = async_only
    limit = runtime.settings.call_timeout
    began = time.monotonic()
    response = runtime.get(f"/sleep?seconds={limit + 3}")
    elapsed = time.monotonic() - began
    assert (response.status_code, response.text) == (408, TIMEOUT_BODY)
    assert limit - 0.1 <= elapsed < limit + 1.0, elapsed
    assert runtime.get("/hello").status_code == 200


def test_legacy_event_and_context(served):
    response = served["event-context"].request("POST", "/legacy", json={"order": 7})
    answer = response.json()
    assert answer["signature"] == "event-context" and answer["method"] == "POST"
    assert answer["data"] == {"order": 7}
    assert answer["ce-type"] is None
    context = answer["context"]
    runtime = served["event-context"]
    assert context["function-name"] == runtime.settings.func_name
    assert context["runtime"] == runtime.launcher.runtime_name
    assert float(context["timeout"]) == runtime.settings.call_timeout


def test_legacy_event_has_the_cloudevent_attributes(served):
    headers = {"ce-specversion": "1.0", "ce-type": "legacy.type", "ce-source": "/legacy", "ce-id": "l-1", "Content-Type": "text/plain"}
    answer = served["event-context"].request("POST", "/legacy", data=b"plain text", headers=headers).json()
    assert (answer["ce-type"], answer["ce-source"], answer["data"]) == ("legacy.type", "/legacy", "plain text")


def test_legacy_emit_cloud_event_reaches_the_publisher(served):
    runtime = served["event-context"]
    before = len(runtime.received)
    assert runtime.request("POST", "/emit").text == "emitted"
    deadline = time.monotonic() + 5
    while len(runtime.received) <= before and time.monotonic() < deadline:
        time.sleep(0.02)
    assert len(runtime.received) > before, "no event reached the publisher proxy"
    sent = json.loads(runtime.received[before]["body"])  # type: ignore[arg-type]
    assert (sent["type"], sent["source"], sent["data"]) == ("conformance.legacy", "/conformance", {"legacy": True})
