"""One small surface over both generations of the ``cloudevents`` library.

- 2.x: events are ``cloudevents.core.v1.event.CloudEvent`` (what Kyma's
  python314 runtime hands to functions); events of the older API kept under
  ``cloudevents.v1`` are accepted too when a function returns or publishes one.
- 1.x: events are ``cloudevents.http.CloudEvent``.

The rest of the runtime imports only this module, so which generation is
installed matters here and nowhere else. ``GENERATION`` says which one is in use
(``make test-cloudevents-1`` runs the CloudEvent tests against 1.x).

Both generations fill in a missing ``id`` (and 2.x a ``time``) when decoding,
so the attributes the specification requires are checked here first: a
request that claims to be a CloudEvent without them is malformed.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any

from .request import loads_json

REQUIRED = ("id", "source", "specversion", "type")
STRUCTURED = "application/cloudevents+json"
BATCH = "application/cloudevents-batch+json"


class MalformedCloudEvent(ValueError):
    """A request claims to be a CloudEvent but is not a valid one; ``str()`` is a short reason."""


try:  # 2.x
    from cloudevents.core.bindings import http as _core_http
    from cloudevents.core.exceptions import BaseCloudEventException as _CoreError
    from cloudevents.core.v1.event import CloudEvent as CloudEvent
    from cloudevents.v1 import conversion as _v1_conversion
    from cloudevents.v1 import http as _v1_http
    from cloudevents.v1.abstract import CloudEvent as _V1Event
    from cloudevents.v1.exceptions import GenericException as _V1Error

    GENERATION = 2
    EVENT_TYPES: tuple[type, ...] = (CloudEvent, _V1Event)
    _ERRORS: tuple[type[BaseException], ...] = (_CoreError, _V1Error, ValueError, TypeError, AttributeError)
except ImportError:  # 1.x
    from cloudevents import conversion as _v1_conversion  # type: ignore[no-redef,attr-defined]
    from cloudevents import http as _v1_http  # type: ignore[no-redef]
    from cloudevents.abstract import CloudEvent as _V1Event  # type: ignore[no-redef]
    from cloudevents.exceptions import GenericException as _V1Error  # type: ignore[no-redef]
    from cloudevents.http import CloudEvent as CloudEvent  # type: ignore[no-redef,assignment]

    GENERATION = 1
    EVENT_TYPES = (_V1Event,)
    _ERRORS = (_V1Error, ValueError, TypeError, AttributeError)


def make_event(attributes: Mapping[str, Any], data: Any = None) -> Any:
    """A new event of the installed generation; ``id``, ``specversion`` (and ``time``) are filled in."""
    try:
        return CloudEvent(dict(attributes), data)
    except _ERRORS as error:
        raise ValueError(f"invalid CloudEvent attributes {sorted(attributes)}: {_reason(error)}") from None


def is_cloud_event(value: Any) -> bool:
    return isinstance(value, EVENT_TYPES)


def attributes_of(event: Any) -> dict[str, Any]:
    """The event's attributes (without data), as the library holds them."""
    return dict(event.get_attributes())


def data_of(event: Any) -> Any:
    return event.get_data()


def attribute_strings(event: Any) -> dict[str, str]:
    """The attributes as the strings they travel as (``time`` in RFC 3339)."""
    result: dict[str, str] = {}
    for name, value in attributes_of(event).items():
        if value is None:
            continue
        if isinstance(value, datetime.datetime):
            text = value.isoformat()
            result[name] = text[:-6] + "Z" if text.endswith("+00:00") else text
        else:
            result[name] = str(value)
    return result


def decode(headers: Mapping[str, str], body: bytes) -> Any:
    """The CloudEvent in an HTTP message (``headers`` with lower-case names).

    Binary mode when a ``ce-`` attribute header is present, else structured mode
    (``application/cloudevents+json``). Raises :class:`MalformedCloudEvent`.
    """
    if any(name.startswith("ce-") for name in headers):
        missing = [name for name in REQUIRED if not headers.get("ce-" + name)]
        if missing:
            raise MalformedCloudEvent("missing required CloudEvent header(s): " + ", ".join("ce-" + name for name in missing))
    else:
        try:
            document = loads_json(body)
        except ValueError:
            raise MalformedCloudEvent("the structured CloudEvent is not valid JSON") from None
        if not isinstance(document, dict):
            raise MalformedCloudEvent("the structured CloudEvent must be a JSON object")
        missing = [name for name in REQUIRED if not isinstance(document.get(name), str) or not document[name]]
        if missing:
            raise MalformedCloudEvent("missing required CloudEvent attribute(s): " + ", ".join(missing))
    try:
        if GENERATION == 2:
            return _core_http.from_http_event(_core_http.HTTPMessage(headers=dict(headers), body=body))
        return _v1_http.from_http(dict(headers), body)
    except _ERRORS as error:
        raise MalformedCloudEvent(f"invalid CloudEvent: {_reason(error)}") from None


def to_binary(event: Any) -> tuple[dict[str, str], bytes]:
    """(headers, body) of the event in binary content mode."""
    if GENERATION == 2 and not isinstance(event, _V1Event):
        message = _core_http.to_binary_event(event)
        return dict(message.headers), bytes(message.body)
    headers, body = _v1_conversion.to_binary(event)
    return dict(headers), _as_bytes(body)


def to_structured(event: Any) -> tuple[dict[str, str], bytes]:
    """(headers, body) of the event in structured content mode (JSON)."""
    if GENERATION == 2 and not isinstance(event, _V1Event):
        message = _core_http.to_structured_event(event)
        return dict(message.headers), bytes(message.body)
    headers, body = _v1_conversion.to_structured(event)
    return dict(headers), _as_bytes(body)


def _as_bytes(body: Any) -> bytes:
    if body is None:
        return b""
    return body.encode() if isinstance(body, str) else bytes(body)


def _reason(error: BaseException) -> str:
    """A short reason naming the attributes at fault, never the event's data."""
    errors = getattr(error, "errors", None)
    if isinstance(errors, dict) and errors:
        return "bad attribute(s) " + ", ".join(sorted(errors))
    name = getattr(error, "attribute_name", None)
    if name:
        return f"bad attribute {name}"
    return type(error).__name__
