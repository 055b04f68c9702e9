"""The ``cloudevents`` library's own events, whichever generation is installed.

funcwsgi decodes and encodes CloudEvents itself (:mod:`funcwsgi.cloudevents`),
so functions get the same :class:`~funcwsgi.cloudevents.CloudEvent` under both
generations. The library matters only when a function makes an event with it
and returns or publishes it: such an event is turned into funcwsgi's type here,
then encoded like any other.

- 2.x: ``cloudevents.core.v1.event.CloudEvent`` (what Kyma's python314 runtime
  uses), and the older API kept under ``cloudevents.v1``.
- 1.x: ``cloudevents.http.CloudEvent`` and ``cloudevents.pydantic``'s.

``GENERATION`` says which one is installed (``make test-cloudevents-1`` runs
the CloudEvent tests against 1.x). The library is imported when first needed.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from ..cloudevents import BATCH, STRUCTURED, CloudEvent, MalformedCloudEvent, time_string
from ..cloudevents import from_http as decode
from ..cloudevents import to_binary as _to_binary
from ..cloudevents import to_structured as _to_structured

__all__ = ["BATCH", "STRUCTURED", "CloudEvent", "MalformedCloudEvent", "as_event", "decode", "is_cloud_event", "make_event"]


class _Library:
    """The installed generation's event classes, imported on first use."""

    def __init__(self) -> None:
        try:  # 2.x
            from cloudevents.core.v03.event import CloudEvent as V03Event
            from cloudevents.core.v1.event import CloudEvent as CoreEvent
            from cloudevents.v1.abstract import CloudEvent as V1Event

            self.generation = 2
            self.event_types: tuple[type, ...] = (CoreEvent, V03Event, V1Event)
        except ImportError:  # 1.x
            from cloudevents.abstract import CloudEvent as V1Event  # type: ignore[no-redef]

            self.generation = 1
            self.event_types = (V1Event,)


@functools.cache
def _library() -> _Library:
    return _Library()


def __getattr__(name: str) -> Any:
    # PEP 562: importing the library only when asked.
    if name == "GENERATION":
        return _library().generation
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def is_library_event(value: Any) -> bool:
    # Nothing can be a library event before the library is imported (by the function).
    return "cloudevents" in sys.modules and isinstance(value, _library().event_types)


def is_cloud_event(value: Any) -> bool:
    return isinstance(value, CloudEvent) or is_library_event(value)


def as_event(value: Any) -> CloudEvent:
    """funcwsgi's event for ours or the library's (its attributes and data, ``time`` as RFC 3339)."""
    if isinstance(value, CloudEvent):
        return value
    attributes = {
        name: time_string(item) if isinstance(item, datetime) else item
        for name, item in dict(value.get_attributes()).items()
        if item is not None
    }
    try:
        return CloudEvent(attributes, value.get_data())
    except ValueError as error:
        raise ValueError(f"the returned cloudevents event cannot be sent: {error}") from None


def make_event(attributes: Mapping[str, Any], data: Any = None) -> CloudEvent:
    """A new event; ``id``, ``specversion`` and ``time`` are filled in. ``ValueError`` names what is wrong."""
    return CloudEvent(attributes, data)


def to_binary(event: Any) -> tuple[dict[str, str], bytes]:
    return _to_binary(as_event(event))


def to_structured(event: Any) -> tuple[dict[str, str], bytes]:
    return _to_structured(as_event(event))


def attributes_of(event: Any) -> dict[str, Any]:
    return as_event(event).get_attributes()


def data_of(event: Any) -> Any:
    return event.get_data()


def attribute_strings(event: Any) -> dict[str, str]:
    """The attributes as the strings they travel as."""
    return {name: "true" if value is True else "false" if value is False else str(value) for name, value in attributes_of(event).items()}
