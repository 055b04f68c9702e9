from __future__ import annotations

import base64
import json

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
