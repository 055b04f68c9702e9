from __future__ import annotations

import wsgiref.validate

import pytest

from funcwsgi.environ import KAFKA_RECORD_KEY, METRIC_ATTRIBUTES_KEY, SPAN_ATTRIBUTES_KEY
from funcwsgi.kafka.records import (
    ERROR_HEADER,
    PLAIN_RECORD_TYPE,
    Record,
    base_environ,
    dead_letter_record,
    record_environ,
    reply_record,
)

BASE = base_environ(8080)


def environ_for(**fields) -> dict:
    return record_environ(Record(topic="orders", partition=2, offset=41, **fields), BASE)


def test_a_binary_cloudevent_maps_to_ce_headers():
    environ = environ_for(
        value=b'{"id": 7}',
        headers=[
            ("ce_specversion", b"1.0"),
            ("ce_id", b"abc"),
            ("ce_source", b"/shop"),
            ("ce_type", b"order.created"),
            ("ce_myextension", b"x"),
            ("content-type", b"application/json"),
        ],
    )
    expected = {
        "HTTP_CE_SPECVERSION": "1.0", "HTTP_CE_ID": "abc", "HTTP_CE_TYPE": "order.created", "HTTP_CE_MYEXTENSION": "x",
        "CONTENT_TYPE": "application/json", "CONTENT_LENGTH": "9",
    }
    assert {name: environ.get(name) for name in expected} == expected
    assert environ["wsgi.input"].read() == b'{"id": 7}'
    assert "HTTP_CE_SUBJECT" not in environ  # nothing is added to a CloudEvent


def test_a_structured_cloudevent_is_passed_as_is():
    body = b'{"specversion": "1.0", "id": "1", "source": "/s", "type": "t"}'
    environ = environ_for(value=body, headers=[("content-type", b"application/cloudevents+json; charset=UTF-8")])
    assert environ["CONTENT_TYPE"] == "application/cloudevents+json; charset=UTF-8"
    assert environ["wsgi.input"].read() == body
    assert not any(key.startswith("HTTP_CE_") for key in environ)


def test_a_plain_record_becomes_a_documented_cloudevent():
    environ = environ_for(value=b"hello", key=b"customer-9", timestamp_ms=1_700_000_000_123)
    assert environ["HTTP_CE_SPECVERSION"] == "1.0"
    assert environ["HTTP_CE_TYPE"] == PLAIN_RECORD_TYPE
    assert environ["HTTP_CE_SOURCE"] == "/kafka/orders"
    assert environ["HTTP_CE_ID"] == "partition:2/offset:41"
    assert environ["HTTP_CE_SUBJECT"] == "partition:2#41"
    assert environ["HTTP_CE_TIME"] == "2023-11-14T22:13:20.123Z"
    assert environ["HTTP_CE_PARTITIONKEY"] == "customer-9"
    assert "CONTENT_TYPE" not in environ


def test_a_plain_record_keeps_its_content_type_and_a_binary_key_is_not_an_attribute():
    environ = environ_for(value=b"{}", key=b"\xff\xfe", headers=[("content-type", b"application/json")])
    assert environ["CONTENT_TYPE"] == "application/json"
    assert "HTTP_CE_PARTITIONKEY" not in environ
    assert environ["HTTP_CE_TYPE"] == PLAIN_RECORD_TYPE


def test_other_headers_become_http_headers_and_trace_context_survives():
    traceparent = b"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    environ = environ_for(value=b"x", headers=[("traceparent", traceparent), ("X-Request-Id", b"r1"), ("x-tag", b"a"), ("x-tag", b"b")])
    expected = {"HTTP_TRACEPARENT": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "HTTP_X_REQUEST_ID": "r1", "HTTP_X_TAG": "a,b"}
    assert {name: environ.get(name) for name in expected} == expected


@pytest.mark.parametrize(
    "name",
    [
        pytest.param("ce-type", id="dashed ce header cannot forge an attribute"),
        pytest.param("content-length", id="content-length"),
        pytest.param("host", id="host"),
        pytest.param("bad header", id="not a token"),
    ],
)
def test_headers_that_would_lie_are_dropped(name):
    environ = environ_for(value=b"x", headers=[(name, b"forged")])
    assert "forged" not in environ.values()
    assert environ["HTTP_CE_TYPE"] == PLAIN_RECORD_TYPE


def test_a_tombstone_is_an_empty_body_and_the_record_is_reachable():
    record = Record(topic="t", partition=0, offset=0, value=None)
    environ = record_environ(record, BASE)
    assert environ["wsgi.input"].read() == b""
    assert environ["CONTENT_LENGTH"] == "0"
    assert environ[KAFKA_RECORD_KEY] is record
    assert environ["REQUEST_METHOD"] == "POST" and environ["PATH_INFO"] == "/"


def test_the_record_gives_the_layers_generic_span_and_metric_attributes():
    """The tracing and FaaS metrics layers name no trigger: what they add comes from the environ."""
    record = Record(topic="orders", partition=2, offset=41, value=b"x", key=b"customer-1")
    environ = record_environ(record, base_environ(8080))
    assert environ[METRIC_ATTRIBUTES_KEY] == {"faas.trigger": "pubsub"}
    assert environ[SPAN_ATTRIBUTES_KEY] == {
        "faas.trigger": "pubsub",
        "messaging.system": "kafka",
        "messaging.operation.type": "process",
        "messaging.destination.name": "orders",
        "messaging.destination.partition.id": "2",
        "messaging.kafka.offset": 41,
        "messaging.kafka.message.key": "customer-1",
    }


def test_the_shared_base_is_not_changed():
    before = dict(BASE)
    environ_for(value=b"x", headers=[("x-a", b"1")])
    assert BASE == before


INCOMING = Record(topic="in", partition=0, offset=5, value=b"v", key=b"k1")


def test_a_binary_cloudevent_response_becomes_a_binary_record():
    reply = reply_record(
        [("ce-specversion", "1.0"), ("ce-id", "r"), ("ce-type", "done"), ("Content-Type", "text/plain"), ("Content-Length", "2")],
        b"ok",
        INCOMING,
    )
    assert reply is not None
    assert reply.headers == [("ce_specversion", b"1.0"), ("ce_id", b"r"), ("ce_type", b"done"), ("content-type", b"text/plain")]
    assert reply.value == b"ok"
    assert reply.key == b"k1"


def test_a_reply_with_a_partitionkey_is_keyed_by_it_and_no_data_means_no_value():
    reply = reply_record([("ce-specversion", "1.0"), ("ce-partitionkey", "p7")], b"", INCOMING)
    assert reply is not None
    assert reply.key == b"p7"
    assert reply.value is None


def test_a_structured_cloudevent_response_keeps_its_body():
    body = b'{"specversion": "1.0"}'
    reply = reply_record([("Content-Type", "application/cloudevents+json")], body, INCOMING)
    assert reply is not None
    assert reply.headers == [("content-type", b"application/cloudevents+json")]
    assert reply.value == body


def test_a_response_that_is_not_a_cloudevent_is_no_reply():
    assert reply_record([("Content-Type", "application/json")], b"{}", INCOMING) is None


def test_a_dead_letter_keeps_the_record_and_says_why():
    record = Record(topic="in", partition=3, offset=9, value=b"v", key=b"k", headers=[("ce_id", b"1"), ("empty", None)])
    letter = dead_letter_record(record, "500 Internal Server Error: RuntimeError: nope", 500, 4)
    headers = dict(letter.headers)
    assert letter.value == b"v" and letter.key == b"k"
    assert headers["ce_id"] == b"1"
    assert headers["empty"] == b""
    assert headers[ERROR_HEADER] == b"500 Internal Server Error: RuntimeError: nope"
    assert headers["funcwsgi_error_status"] == b"500"
    assert headers["funcwsgi_attempts"] == b"4"
    assert (headers["funcwsgi_original_topic"], headers["funcwsgi_original_partition"], headers["funcwsgi_original_offset"]) == (b"in", b"3", b"9")


def test_a_huge_error_is_cut():
    letter = dead_letter_record(INCOMING, "x" * 10000, 500, 1)
    assert len(dict(letter.headers)[ERROR_HEADER]) == 4096


def test_a_records_environ_is_pep_3333_clean():
    # As every HTTP adapter's (tests/adapters/test_http_rules.py::test_the_environ_is_pep_3333_clean).
    for environ in (
        environ_for(value=b'{"a": 1}', key=b"key", headers=[("content-type", b"application/json"), ("x-trace", b"1")], timestamp_ms=1700000000000),
        environ_for(headers=[("ce_specversion", b"1.0"), ("ce_id", b"1"), ("ce_type", b"t"), ("ce_source", b"/s")]),
    ):
        assert [key for key, value in environ.items() if "." not in key and type(value) is not str] == []
        wsgiref.validate.check_environ(environ)
