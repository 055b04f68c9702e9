from __future__ import annotations

import base64
import json

import pytest

from funcwsgi.cloudevents import decode, encode_binary


def test_binary_encoding_of_json_data():
    headers, body = encode_binary({"a": 1}, type="t", source="/s", id="1", subject="sub", extensions={"TraceParent": "x"})
    assert json.loads(body) == {"a": 1}
    assert headers["ce-specversion"] == "1.0" and headers["ce-id"] == "1" and headers["ce-type"] == "t"
    assert headers["ce-source"] == "/s" and headers["ce-subject"] == "sub" and headers["ce-traceparent"] == "x"
    assert headers["Content-Type"] == "application/json"
    assert headers["ce-time"].endswith("Z")


def test_defaults_are_fresh():
    first, _ = encode_binary(None, type="t", source="s")
    second, _ = encode_binary(None, type="t", source="s")
    assert first["ce-id"] != second["ce-id"]
    assert "Content-Type" not in first


def test_round_trip_binary():
    headers, body = encode_binary("hi", type="t", source="s", id="9")
    event = decode({k.lower(): v for k, v in headers.items()}, body)
    assert event is not None and event.type == "t" and event.id == "9" and event.data == "hi"
    assert event["datacontenttype"] == "text/plain; charset=utf-8"


def test_structured_with_base64_data():
    document = {"specversion": "1.0", "type": "t", "source": "s", "id": "2", "data_base64": base64.b64encode(b"\x00\x01").decode()}
    event = decode({"content-type": "application/cloudevents+json"}, json.dumps(document).encode())
    assert event is not None and event.data == b"\x00\x01" and event.source == "s"


def test_plain_http_is_not_an_event():
    assert decode({"content-type": "application/json"}, b"{}") is None
    assert decode({"content-type": "application/cloudevents+json"}, b"not json") is None


# Cases the mutation run (make mutation, docs/reliability.md) found untested.

BINARY_HEADERS = {"ce-specversion": "1.0", "ce-id": "1", "ce-type": "t", "ce-source": "/s"}


@pytest.mark.parametrize(
    ("content_type", "body", "data"),
    [
        pytest.param("application/json", b'{"a": 1}', {"a": 1}, id="json"),
        pytest.param("application/json", b"{nope", b"{nope", id="json-not-parsing-stays-bytes"),
        pytest.param("application/avro", b"[1]", b"[1]", id="other-type-stays-bytes-even-if-json"),
        pytest.param(None, b'{"a": 1}', {"a": 1}, id="no-type-json"),
        pytest.param(None, b"plain words", "plain words", id="no-type-text"),
        pytest.param("text/plain", b"caf\xc3\xa9", "café", id="text"),
        pytest.param("text/plain", b"\xff\xfe", b"\xff\xfe", id="text-not-utf8-stays-bytes"),
    ],
)
def test_binary_data_is_decoded_by_its_content_type(content_type, body, data):
    """Mutations caught: ``media == JSON`` made ``<``, ``<=``, ``is`` or ``and``; ``if not media``
    inverted; each ``except`` of the data decoding narrowed away."""
    headers = dict(BINARY_HEADERS, **({"content-type": content_type} if content_type else {}))
    event = decode(headers, body)
    assert event is not None and event.data == data


def test_a_structured_content_type_with_parameters_is_structured():
    """Mutation caught: the media type taken after the ``;`` (``split(";")[-1]``) instead of before it."""
    body = json.dumps({"specversion": "1.0", "id": "1", "type": "t", "source": "/s", "data": {"a": 1}}).encode()
    event = decode({"content-type": "application/cloudevents+json; charset=utf-8"}, body)
    assert event is not None and event.type == "t" and event.data == {"a": 1}


def test_a_media_type_sorting_before_structured_is_not_structured():
    """Mutation caught: ``== STRUCTURED`` made ``<=`` (``application/avro`` sorts before it)."""
    event = decode(dict(BINARY_HEADERS, **{"content-type": "application/avro"}), b"\x01")
    assert event is not None and event.type == "t" and event.data == b"\x01"


def test_a_structured_document_without_specversion_is_no_event():
    """Mutation caught: ``not isinstance(document, dict) or "specversion" not in document`` made ``and``."""
    assert decode({"content-type": "application/cloudevents+json"}, b'{"id": "1", "type": "t"}') is None


def test_a_decoded_event_cannot_be_changed():
    """Mutation caught: ``@dataclass(frozen=True)`` made ``frozen=False``: the function gets the event
    the runtime decoded, and other layers may hold the same object."""
    import dataclasses

    event = decode(BINARY_HEADERS, b"")
    with pytest.raises(dataclasses.FrozenInstanceError):
        event.data = "changed"  # type: ignore[misc]
