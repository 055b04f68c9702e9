"""C5: CloudEvents in (binary and structured), out (a reply), and emitted to the publisher."""

from __future__ import annotations

import json
import time

import pytest

from .kit import structured

BINARY = {
    "ce-specversion": "1.0",
    "ce-type": "conformance.order.created",
    "ce-source": "/conformance/tests",
    "ce-id": "c-1",
    "ce-conformanceext": "ext-value",
    "Content-Type": "application/json",
}


def test_binary_event_is_decoded(runtime):
    response = runtime.request("POST", "/cloudevent/echo", data=json.dumps({"order": 1}), headers=BINARY)
    body = response.json()
    attributes = body["cloudevent"]
    assert attributes["type"] == "conformance.order.created"
    assert attributes["source"] == "/conformance/tests"
    assert attributes["id"] == "c-1"
    assert attributes["specversion"] == "1.0"
    assert attributes["conformanceext"] == "ext-value"
    assert body["data"] == {"order": 1}


def test_structured_event_is_decoded(runtime):
    envelope = {
        "specversion": "1.0", "type": "conformance.structured", "source": "/conformance", "id": "s-1",
        "datacontenttype": "application/json", "data": {"n": 2},
    }
    response = runtime.request(
        "POST", "/cloudevent/echo", data=json.dumps(envelope), headers={"Content-Type": "application/cloudevents+json"}
    )
    body = response.json()
    assert body["cloudevent"]["type"] == "conformance.structured" and body["cloudevent"]["id"] == "s-1"
    assert body["data"] == {"n": 2}


def test_plain_call_has_no_event(runtime):
    assert runtime.request("POST", "/cloudevent/echo", json={"a": 1}).json() == {"cloudevent": None}


@pytest.mark.parametrize(
    "headers",
    [
        pytest.param({"ce-specversion": "1.0", "ce-type": "t", "ce-source": "/s"}, id="binary-without-id"),
        pytest.param({"Content-Type": "application/cloudevents+json"}, id="structured-not-json"),
    ],
)
def test_malformed_event_is_400(runtime, headers):
    response = runtime.request("POST", "/cloudevent/echo", data=b"{not json", headers=headers)
    assert response.status_code == 400


def test_returned_event_is_a_binary_reply(runtime):
    response = runtime.request("POST", "/cloudevent/reply")
    assert response.status_code == 200
    assert response.headers["ce-type"] == "conformance.reply"
    assert response.headers["ce-source"] == "/conformance"
    assert response.headers["ce-specversion"] == "1.0"
    assert response.headers["ce-id"]
    assert response.headers["Content-Type"].split(";")[0] == "application/json"
    assert response.json() == {"ok": True}


def test_emitted_event_reaches_the_publisher(runtime):
    before = len(runtime.received)
    response = runtime.request("POST", "/cloudevent/emit?n=5")
    assert response.status_code == 204
    deadline = time.monotonic() + 5
    while len(runtime.received) <= before and time.monotonic() < deadline:
        time.sleep(0.02)
    assert len(runtime.received) > before, "no event reached the publisher proxy"
    event = runtime.received[before]
    assert event["path"] == "/publish"
    assert event["headers"]["content-type"].startswith("application/cloudevents+json")
    sent = structured(event)
    assert sent["type"] == "conformance.emitted" and sent["source"] == "/conformance"
    assert sent["specversion"] == "1.0" and sent["id"]
    assert sent["data"] == {"n": 5}
