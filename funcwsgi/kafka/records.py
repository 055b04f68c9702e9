"""Kafka records as WSGI requests, and WSGI responses as Kafka records.

The CloudEvents Kafka protocol binding maps one to one onto the HTTP binding:
the ``ce_<attribute>`` record header is the ``ce-<attribute>`` HTTP header, the
record's ``content-type`` header is the request's ``Content-Type`` and the
value is the body. So a record becomes a WSGI environ that the CloudEvents
layer decodes exactly as it decodes an HTTP request, and every other layer
(metrics, tracing, logs, timeout, errors) sees an ordinary ``POST /``.
"""

from __future__ import annotations

import io
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ..environ import KAFKA_RECORD_KEY, METRIC_ATTRIBUTES_KEY, SPAN_ATTRIBUTES_KEY

#: CloudEvent type and source pattern of a record that is not a CloudEvent: the
#: names Knative's KafkaSource uses, so functions written for it run unchanged.
PLAIN_RECORD_TYPE = "dev.knative.kafka.event"
PLAIN_RECORD_SOURCE = "/kafka/{topic}"

#: Where the record being served sits in the environ.

STRUCTURED_PREFIX = "application/cloudevents"
_HEADER_TOKEN = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
_NOT_FORWARDED = frozenset({"HTTP_CONTENT_TYPE", "HTTP_CONTENT_LENGTH", "HTTP_HOST"})

Headers = list[tuple[str, bytes | None]]


@dataclass(frozen=True)
class Record:
    """One consumed record, copied out of the client's message object once."""

    topic: str
    partition: int
    offset: int
    value: bytes | None = None
    key: bytes | None = None
    headers: Headers = field(default_factory=list)
    timestamp_ms: int | None = None

    @property
    def where(self) -> str:
        """``topic[partition]@offset``, as the log lines name a record."""
        return f"{self.topic}[{self.partition}]@{self.offset}"


def span_attributes(record: Record) -> dict[str, Any]:
    """The messaging attributes (OpenTelemetry's conventions) the tracing layer gives the call a record triggered."""
    attributes = {
        "faas.trigger": "pubsub",
        "messaging.system": "kafka",
        "messaging.operation.type": "process",
        "messaging.destination.name": record.topic,
        "messaging.destination.partition.id": str(record.partition),
        "messaging.kafka.offset": record.offset,
    }
    if record.key is not None:
        attributes["messaging.kafka.message.key"] = record.key.decode("utf-8", "replace")
    return attributes


def base_environ(server_port: int) -> dict[str, Any]:
    """The keys every record's environ shares, built once at start-up."""
    return {
        "REQUEST_METHOD": "POST",
        "SCRIPT_NAME": "",
        "PATH_INFO": "/",
        "QUERY_STRING": "",
        "SERVER_NAME": "kafka",
        "SERVER_PORT": str(server_port),
        "SERVER_PROTOCOL": "HTTP/1.1",
        "HTTP_HOST": "kafka",
        "wsgi.version": (1, 0),
        "wsgi.url_scheme": "http",
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": True,
        "wsgi.multiprocess": False,
        "wsgi.run_once": False,
        # The conventions' trigger for a message from a queue or topic.
        METRIC_ATTRIBUTES_KEY: {"faas.trigger": "pubsub"},
    }


def record_environ(record: Record, base: Mapping[str, Any]) -> dict[str, Any]:
    """The WSGI environ of a ``POST /`` carrying ``record`` as an HTTP CloudEvent.

    - binary mode (a ``ce_specversion`` header): ``ce_*`` headers become
      ``ce-*`` headers, ``content-type`` the request's content type;
    - structured mode (``content-type: application/cloudevents...``): passed as is;
    - any other record becomes a binary CloudEvent of type
      :data:`PLAIN_RECORD_TYPE`, id ``partition:P/offset:O``, its key as the
      ``partitionkey`` extension and its timestamp as ``time``.

    Other headers (``traceparent``, ``x-request-id``, ...) become HTTP headers.
    """
    environ = dict(base)
    body = record.value or b""
    environ["wsgi.input"] = io.BytesIO(body)
    environ["CONTENT_LENGTH"] = str(len(body))
    environ[KAFKA_RECORD_KEY] = record
    environ[SPAN_ATTRIBUTES_KEY] = span_attributes(record)
    is_event = False
    for name, raw in record.headers:
        # WSGI carries header values as the raw bytes decoded as latin-1, as HTTP servers do.
        text = raw.decode("latin-1") if raw is not None else ""
        lower = name.lower()
        if lower == "content-type":
            environ["CONTENT_TYPE"] = text
            is_event = is_event or text[: len(STRUCTURED_PREFIX)].lower() == STRUCTURED_PREFIX
            continue
        if lower.startswith("ce_"):
            attribute = lower[3:]
            if not attribute.isalnum():
                continue
            key = "HTTP_CE_" + attribute.upper()
            is_event = is_event or attribute == "specversion"
        else:
            if not _HEADER_TOKEN.match(name):
                continue
            key = "HTTP_" + name.upper().replace("-", "_")
            if key in _NOT_FORWARDED or key.startswith("HTTP_CE_"):
                continue  # only ce_ headers may carry CloudEvent attributes
        environ[key] = environ[key] + "," + text if key in environ else text
    if not is_event:
        _describe_plain_record(environ, record)
    return environ


def _describe_plain_record(environ: dict[str, Any], record: Record) -> None:
    environ["HTTP_CE_SPECVERSION"] = "1.0"
    environ["HTTP_CE_ID"] = f"partition:{record.partition}/offset:{record.offset}"
    environ["HTTP_CE_SOURCE"] = PLAIN_RECORD_SOURCE.format(topic=record.topic)
    environ["HTTP_CE_TYPE"] = PLAIN_RECORD_TYPE
    environ["HTTP_CE_SUBJECT"] = f"partition:{record.partition}#{record.offset}"
    if record.timestamp_ms is not None and record.timestamp_ms >= 0:
        moment = datetime.fromtimestamp(record.timestamp_ms / 1000, tz=UTC)
        environ["HTTP_CE_TIME"] = moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    if record.key:
        try:
            record.key.decode("utf-8")
        except UnicodeDecodeError:
            return  # a binary key cannot be an attribute; the function still finds it on the record
        environ["HTTP_CE_PARTITIONKEY"] = record.key.decode("latin-1")


@dataclass(frozen=True)
class OutgoingRecord:
    """A record to produce: a reply or a dead letter."""

    value: bytes | None
    key: bytes | None
    headers: list[tuple[str, bytes]]


def reply_record(headers: Iterable[tuple[str, str]], body: bytes, incoming: Record) -> OutgoingRecord | None:
    """The response as a Kafka record, if it is a CloudEvent; ``None`` otherwise.

    A binary-mode HTTP CloudEvent (``ce-*`` headers) becomes a binary-mode
    record (``ce_*`` headers), a structured one keeps its content type and
    body. The key is the event's ``partitionkey`` if it has one, else the key
    of the record that was served, so replies keep the order of their keys.
    """
    out: list[tuple[str, bytes]] = []
    binary = structured = False
    partition_key: bytes | None = None
    for name, value in headers:
        lower = name.lower()
        raw = value.encode("latin-1")
        if lower.startswith("ce-"):
            attribute = lower[3:]
            out.append(("ce_" + attribute, raw))
            binary = binary or attribute == "specversion"
            if attribute == "partitionkey":
                partition_key = raw
        elif lower == "content-type":
            out.append(("content-type", raw))
            structured = value[: len(STRUCTURED_PREFIX)].lower() == STRUCTURED_PREFIX
    if not (binary or structured):
        return None
    value_bytes: bytes | None = body if body or structured else None  # binary mode: no data, no value
    return OutgoingRecord(value_bytes, partition_key if partition_key is not None else incoming.key, out)


#: Headers added to a dead-lettered record; its own headers are kept, so a
#: CloudEvent stays the same CloudEvent.
ERROR_HEADER = "funcwsgi_error"
MAX_ERROR_BYTES = 4096


def dead_letter_record(record: Record, error: str, status: int, attempts: int) -> OutgoingRecord:
    """``record`` as it came, plus headers saying why and where it failed."""
    headers: list[tuple[str, bytes]] = [(name, value or b"") for name, value in record.headers]
    headers += [
        (ERROR_HEADER, error.encode("utf-8", "replace")[:MAX_ERROR_BYTES]),
        ("funcwsgi_error_status", str(status).encode()),
        ("funcwsgi_attempts", str(attempts).encode()),
        ("funcwsgi_original_topic", record.topic.encode("utf-8")),
        ("funcwsgi_original_partition", str(record.partition).encode()),
        ("funcwsgi_original_offset", str(record.offset).encode()),
    ]
    return OutgoingRecord(record.value, record.key, headers)
