"""One small surface over both generations of the ``cloudevents`` library.

- 2.x: events are ``cloudevents.core.v1.event.CloudEvent`` (what Kyma's
  python314 runtime hands to functions); events of the older API kept under
  ``cloudevents.v1`` are accepted too when a function returns or publishes one.
- 1.x: events are ``cloudevents.http.CloudEvent``.

The rest of the runtime reaches the library only through this module (the core
through :mod:`funcwsgi.compat`), so which generation is installed matters here
and nowhere else. ``GENERATION`` says which one is in use
(``make test-cloudevents-1`` runs the CloudEvent tests against 1.x). The library
is imported when first needed, not with this module.

Both generations fill in a missing ``id`` (and 2.x a ``time``) when decoding,
so the attributes the specification requires are checked first
(:func:`funcwsgi.cloudevents.check_required`): a request that claims to be a
CloudEvent without them is malformed.
"""

from __future__ import annotations

import datetime
import functools
import sys
from collections.abc import Mapping
from typing import Any

from ..cloudevents import MalformedCloudEvent, check_required


class _Library:
    """The installed generation's pieces, imported on first use: a server that never sees
    a CloudEvent never pays for importing the library (and its date parser)."""

    def __init__(self) -> None:
        try:  # 2.x
            from cloudevents.core.bindings import http as core_http
            from cloudevents.core.exceptions import BaseCloudEventException as CoreError
            from cloudevents.core.v1.event import CloudEvent
            from cloudevents.v1 import conversion as v1_conversion
            from cloudevents.v1 import http as v1_http
            from cloudevents.v1.abstract import CloudEvent as V1Event
            from cloudevents.v1.exceptions import GenericException as V1Error

            self.generation = 2
            self.core_http: Any = core_http
            self.event_types: tuple[type, ...] = (CloudEvent, V1Event)
            self.errors: tuple[type[BaseException], ...] = (CoreError, V1Error, ValueError, TypeError, AttributeError)
            self.cloud_event: Any = CloudEvent
            self.v1_event: Any = V1Event
            self.v1_http: Any = v1_http
            self.v1_conversion: Any = v1_conversion
        except ImportError:  # 1.x: the same pieces at their old places
            import cloudevents.conversion as old_conversion
            import cloudevents.http as old_http
            from cloudevents.abstract import CloudEvent as OldAbstractEvent
            from cloudevents.exceptions import GenericException as OldError

            self.generation = 1
            self.core_http = None
            self.event_types = (OldAbstractEvent,)
            self.errors = (OldError, ValueError, TypeError, AttributeError)
            self.cloud_event = old_http.CloudEvent
            self.v1_event = OldAbstractEvent
            self.v1_http = old_http
            self.v1_conversion = old_conversion


@functools.cache
def _library() -> _Library:
    return _Library()


def __getattr__(name: str) -> Any:
    # PEP 562: the library's names, importing it on first use.
    if name == "GENERATION":
        return _library().generation
    if name == "CloudEvent":
        return _library().cloud_event
    if name == "EVENT_TYPES":
        return _library().event_types
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def make_event(attributes: Mapping[str, Any], data: Any = None) -> Any:
    """A new event of the installed generation; ``id``, ``specversion`` (and ``time``) are filled in."""
    library = _library()
    try:
        return library.cloud_event(dict(attributes), data)
    except library.errors as error:
        raise ValueError(f"invalid CloudEvent attributes {sorted(attributes)}: {_reason(error)}") from None


def is_cloud_event(value: Any) -> bool:
    # Nothing can be a CloudEvent before the library is imported (by the function, or by us).
    return "cloudevents" in sys.modules and isinstance(value, _library().event_types)


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
    check_required(headers, body)
    library = _library()
    try:
        if library.generation == 2:
            return library.core_http.from_http_event(library.core_http.HTTPMessage(headers=dict(headers), body=body))
        return library.v1_http.from_http(dict(headers), body)
    except library.errors as error:
        raise MalformedCloudEvent(f"invalid CloudEvent: {_reason(error)}") from None


def to_binary(event: Any) -> tuple[dict[str, str], bytes]:
    """(headers, body) of the event in binary content mode."""
    library = _library()
    if library.generation == 2 and not isinstance(event, library.v1_event):
        message = library.core_http.to_binary_event(event)
        return dict(message.headers), bytes(message.body)
    headers, body = library.v1_conversion.to_binary(event)
    return dict(headers), _as_bytes(body)


def to_structured(event: Any) -> tuple[dict[str, str], bytes]:
    """(headers, body) of the event in structured content mode (JSON)."""
    library = _library()
    if library.generation == 2 and not isinstance(event, library.v1_event):
        message = library.core_http.to_structured_event(event)
        return dict(message.headers), bytes(message.body)
    headers, body = library.v1_conversion.to_structured(event)
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
