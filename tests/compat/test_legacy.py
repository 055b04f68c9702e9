from __future__ import annotations

import logging

import pytest
from werkzeug.test import EnvironBuilder

from funcwsgi.compat import legacy
from funcwsgi.compat.legacy import Event, build_event
from funcwsgi.request import FunctionRequest


def event_for(**kwargs) -> Event:
    return build_event(FunctionRequest(EnvironBuilder(**kwargs).get_environ()))


def test_kubeless_keys_are_always_there_kymas_read_as_none_when_absent():
    event = event_for(headers={"event-id": "e1", "ce-type": "t", "ce-partitionkey": "p"})
    assert event["event-id"] == "e1"
    assert event["event-type"] is None and event["event-time"] is None and event["event-namespace"] is None
    assert "event-type" in event  # Kubeless put its four keys in every event
    assert event["ce-type"] == "t" and event["ce-source"] is None and event["ce-time"] is None
    assert "ce-source" not in event and "ce-time" not in event  # Kyma <=3.12 had only the keys sent
    assert event["ce-partitionkey"] == "p"
    with pytest.raises(KeyError):
        event["ce-not-sent"]  # noqa: B018 - only Kyma's six keys read as None


def test_ce_headers_is_the_event_itself():
    # Kyma's event kept its keys in event.ceHeaders; its own test functions pop from it.
    event = event_for(headers={"ce-type": "t"})
    assert event.ceHeaders is event
    assert "ce-type" in event.ceHeaders and "ce-id" not in event.ceHeaders
    request = event.ceHeaders["extensions"]["request"]
    assert request is event.extensions["request"] is event.req
    event.ceHeaders.pop("extensions")
    assert "extensions" not in event
    event["mine"] = 1
    assert event.ceHeaders["mine"] == 1


def test_context_has_every_key_kyma_gave():
    from funcwsgi.config import Config

    config = Config.from_env({"FUNC_NAME": "fn", "SERVICE_NAMESPACE": "ns", "FUNC_RUNTIME": "python312", "FUNC_TIMEOUT": "30",
                              "FUNC_MEMORY_LIMIT": "128Mi", "FUNC_MEMFILE_MAX": "2048"})
    assert legacy.build_context(config, "main") == {
        "function-name": "fn", "namespace": "ns", "runtime": "python312", "timeout": 30.0,
        "memory-limit": "128Mi", "body-size-limit": 2048,
    }


def test_tracer_is_the_sdks():
    import sdk

    assert event_for().tracer is not None and type(event_for().tracer) is type(sdk.get_tracer())


@pytest.mark.parametrize(
    ("content_type", "data", "expected"),
    [
        pytest.param("application/json", b'{"a": 1}', {"a": 1}, id="json"),
        pytest.param("application/json; charset=utf-8", b"[1]", [1], id="json-with-charset"),
        pytest.param("application/json", b"", None, id="json-without-body-is-none"),
        pytest.param("text/plain", b"hi", b"hi", id="bytes"),
        pytest.param("text/plain", b"", b"", id="no-body"),
    ],
)
def test_data(content_type, data, expected):
    assert event_for(method="POST", data=data, content_type=content_type)["data"] == expected


def test_invalid_json_is_a_400_as_bottle_gave():
    from werkzeug.exceptions import BadRequest

    with pytest.raises(BadRequest):
        event_for(method="POST", data=b"{bad", content_type="application/json")


class _Decoded:
    """What the CloudEvents layer leaves on the request: an object with the library's getters."""

    def get_attributes(self):
        return {"type": "t.structured", "source": "/s", "id": "9", "specversion": "1.0"}

    def get_data(self):
        return {"inner": True}


def test_a_decoded_cloud_event_fills_the_ce_keys_and_structured_data():
    environ = EnvironBuilder(method="POST", data=b'{"data": {"inner": true}}', content_type="application/cloudevents+json").get_environ()
    request = FunctionRequest(environ)
    request.cloud_event = _Decoded()
    event = build_event(request)
    assert event["ce-type"] == "t.structured" and event["ce-id"] == "9"
    assert event["data"] == {"inner": True}


def test_build_response_cloud_event_answers_with_the_incoming_source():
    event = event_for(headers={"ce-source": "/shop", "ce-eventtypeversion": "v1", "ce-specversion": "1.0"})
    assert event.buildResponseCloudEvent("id-1", "reply", "text") == {
        "type": "reply", "source": "/shop", "eventtypeversion": "v1", "specversion": "1.0",
        "id": "id-1", "data": "text", "datacontenttype": "text/plain",
    }


def test_deprecation_is_logged_once_per_process(caplog, monkeypatch):
    monkeypatch.setattr(legacy, "_warned", set())
    event = event_for()
    with caplog.at_level(logging.WARNING, logger="funcwsgi.legacy"):
        event.buildResponseCloudEvent("1", "t", {})
        event.buildResponseCloudEvent("2", "t", {})
    messages = [r.getMessage() for r in caplog.records if "deprecated" in r.getMessage()]
    assert messages == ["event.buildResponseCloudEvent is deprecated and will be removed; use sdk.emit_cloud_event(type, source, data, optional_attributes)"]


def test_publish_cloud_event_refuses_a_dict_without_type(monkeypatch):
    monkeypatch.setattr(legacy, "_warned", {"publishCloudEvent"})
    with pytest.raises(ValueError, match="'type' and 'source'"):
        event_for().publishCloudEvent({"data": 1})


def test_event_is_a_dict():
    event = event_for()
    event["mine"] = 1
    assert isinstance(event, dict) and event["mine"] == 1


@pytest.mark.parametrize(
    ("written", "reported"),
    [
        pytest.param("268435456\n", "268435456", id="limited"),
        pytest.param("max\n", "", id="v2-unlimited"),
        pytest.param("9223372036854771712\n", "", id="v1-unlimited"),
    ],
)
def test_memory_limit_from_the_cgroup(tmp_path, written, reported):
    limit = tmp_path / "memory.max"
    limit.write_text(written)
    assert legacy._memory_limit((str(tmp_path / "absent"), str(limit))) == reported
