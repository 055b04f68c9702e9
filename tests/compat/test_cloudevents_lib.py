"""The one surface over both cloudevents generations (run with each: `make test-cloudevents-1`)."""

from __future__ import annotations

import json

import pytest

from funcwsgi.cloudevents import STRUCTURED, MalformedCloudEvent
from funcwsgi.compat import cloudevents_lib as ce

BINARY = {"ce-id": "a1", "ce-source": "/shop", "ce-type": "order.created", "ce-specversion": "1.0", "content-type": "application/json"}


def test_decode_binary():
    event = ce.decode(BINARY, b'{"id": 7}')
    assert ce.data_of(event) == {"id": 7}
    attributes = ce.attribute_strings(event)
    assert {k: attributes[k] for k in ("id", "source", "type", "specversion")} == {
        "id": "a1", "source": "/shop", "type": "order.created", "specversion": "1.0",
    }


def test_decode_structured():
    body = json.dumps({"id": "b2", "source": "/s", "type": "t", "specversion": "1.0", "subject": "x", "data": [1, 2]}).encode()
    event = ce.decode({"content-type": STRUCTURED}, body)
    assert ce.data_of(event) == [1, 2]
    assert ce.attribute_strings(event)["subject"] == "x"


@pytest.mark.parametrize(
    ("headers", "body", "reason"),
    [
        pytest.param({"ce-type": "t", "ce-source": "/s"}, b"", "missing required CloudEvent header(s): ce-id, ce-specversion", id="binary-missing"),
        pytest.param({"ce-type": "t", "ce-source": "/s", "ce-id": "", "ce-specversion": "1.0"}, b"", "missing required CloudEvent header(s): ce-id", id="binary-empty-id"),
        pytest.param({"content-type": STRUCTURED}, b"{not json", "the structured CloudEvent is not valid JSON", id="structured-bad-json"),
        pytest.param({"content-type": STRUCTURED}, b"[1]", "the structured CloudEvent must be a JSON object", id="structured-array"),
        pytest.param({"content-type": STRUCTURED}, b'{"type": "t", "id": 5}', "missing required CloudEvent attribute(s): id, source, specversion", id="structured-missing"),
    ],
)
def test_malformed_events_name_what_is_wrong(headers, body, reason):
    with pytest.raises(MalformedCloudEvent) as caught:
        ce.decode(headers, body)
    assert str(caught.value) == reason


def test_an_unknown_specversion_is_malformed_without_echoing_data():
    headers = dict(BINARY, **{"ce-specversion": "9.9"})
    with pytest.raises(MalformedCloudEvent) as caught:
        ce.decode(headers, b'{"secret": "hunter2"}')
    assert str(caught.value).startswith("invalid CloudEvent")
    assert "hunter2" not in str(caught.value)


def test_make_event_fills_in_id_and_specversion():
    event = ce.make_event({"type": "t", "source": "/s"}, {"a": 1})
    attributes = ce.attribute_strings(event)
    assert attributes["specversion"] == "1.0" and attributes["id"]
    assert ce.is_cloud_event(event)
    assert not ce.is_cloud_event({"type": "t"})


def test_binary_and_structured_round_trip():
    event = ce.make_event({"type": "t", "source": "/s", "subject": "x"}, {"a": 1})
    headers, body = ce.to_binary(event)
    lowered = {k.lower(): v for k, v in headers.items()}
    assert lowered["ce-type"] == "t" and lowered["ce-subject"] == "x"
    assert ce.data_of(ce.decode(lowered, body)) == {"a": 1}
    headers, body = ce.to_structured(event)
    assert {k.lower(): v for k, v in headers.items()}["content-type"].startswith(STRUCTURED)
    again = ce.decode({"content-type": STRUCTURED}, body)
    assert ce.attribute_strings(again)["id"] == ce.attribute_strings(event)["id"]
    assert ce.data_of(again) == {"a": 1}


def test_generation_matches_the_installed_library():
    from importlib.metadata import version

    assert ce.GENERATION == int(version("cloudevents").split(".")[0])
