"""CloudEvents over HTTP: the content modes, the required attributes, a caller's encoding.

The runtime checks that a request claiming to be a CloudEvent carries the
attributes the specification requires (:func:`check_required`) before the
cloudevents library decodes it (:mod:`funcwsgi.compat.cloudevents_lib`).

The testing client and ``funcwsgi invoke`` send events in binary content mode
(attributes as ``ce-*`` headers, data as the body) and read replies in either
mode (binary, or structured ``application/cloudevents+json``).
"""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from .request import loads_json

if TYPE_CHECKING:
    from werkzeug.datastructures import Headers

SPEC_VERSION = "1.0"
REQUIRED = ("id", "source", "specversion", "type")
STRUCTURED = "application/cloudevents+json"
BATCH = "application/cloudevents-batch+json"
JSON = "application/json"
#: Attributes that are not ``ce-`` headers in binary mode.
_CONTENT_TYPE = "datacontenttype"


class MalformedCloudEvent(ValueError):
    """A request claims to be a CloudEvent but is not a valid one; ``str()`` is a short reason."""


def check_required(headers: Mapping[str, str], body: bytes) -> None:
    """Raise :class:`MalformedCloudEvent` unless the message carries every required attribute.

    Binary mode when a ``ce-`` attribute header is present (``headers`` with
    lower-case names), else structured mode (``application/cloudevents+json``).
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


@dataclass(frozen=True)
class CloudEvent:
    """An event's context attributes (``type``, ``source``, ``id``, ...) and its data."""

    attributes: dict[str, str] = field(default_factory=dict)
    data: Any = None

    @property
    def type(self) -> str | None:
        return self.attributes.get("type")

    @property
    def source(self) -> str | None:
        return self.attributes.get("source")

    @property
    def id(self) -> str | None:
        return self.attributes.get("id")

    def __getitem__(self, name: str) -> str:
        return self.attributes[name]


def encode_binary(
    data: Any,
    *,
    type: str,
    source: str,
    id: str | None = None,
    subject: str | None = None,
    time: str | None = None,
    content_type: str | None = None,
    extensions: Mapping[str, str] | None = None,
) -> tuple[dict[str, str], bytes]:
    """Headers and body of a binary-mode HTTP CloudEvent carrying ``data``.

    ``data`` that is not ``str``/``bytes`` is sent as JSON. ``id`` defaults to
    a fresh UUID and ``time`` to now, as an event producer would set them.
    """
    body, guessed = _encode_data(data)
    headers = {
        "ce-specversion": SPEC_VERSION,
        "ce-id": id or str(uuid.uuid4()),
        "ce-source": source,
        "ce-type": type,
        "ce-time": time or datetime.now(UTC).isoformat().replace("+00:00", "Z"),
    }
    if subject:
        headers["ce-subject"] = subject
    for name, value in (extensions or {}).items():
        headers[f"ce-{name.lower()}"] = str(value)
    media_type = content_type or guessed
    if media_type:
        headers["Content-Type"] = media_type
    return headers, body


def _encode_data(data: Any) -> tuple[bytes, str | None]:
    if data is None:
        return b"", None
    if isinstance(data, bytes):
        return data, "application/octet-stream"
    if isinstance(data, str):
        return data.encode(), "text/plain; charset=utf-8"
    return json.dumps(data).encode(), JSON


def decode(headers: Mapping[str, str] | Headers, body: bytes) -> CloudEvent | None:
    """The CloudEvent an HTTP message carries, in either content mode, or ``None``.

    ``headers`` may be any mapping with case-insensitive ``get`` (werkzeug's,
    ``http.client``'s) or a plain dict with lower-case names.
    """
    content_type = _get(headers, "content-type") or ""
    if content_type.split(";")[0].strip().lower() == STRUCTURED:
        return _decode_structured(body)
    items = headers.items() if hasattr(headers, "items") else []
    attributes = {name.lower()[3:]: value for name, value in items if name.lower().startswith("ce-")}
    if "specversion" not in attributes:
        return None
    if content_type:
        attributes[_CONTENT_TYPE] = content_type
    return CloudEvent(attributes, _decode_data(body, content_type))


def _get(headers: Mapping[str, str] | Headers, name: str) -> str | None:
    value = headers.get(name)
    if value is None:
        value = headers.get(name.title())
    return value


def _decode_structured(body: bytes) -> CloudEvent | None:
    try:
        document = json.loads(body)
    except ValueError:
        return None
    if not isinstance(document, dict) or "specversion" not in document:
        return None
    attributes = {key: str(value) for key, value in document.items() if key not in ("data", "data_base64")}
    if "data_base64" in document:
        data: Any = base64.b64decode(document["data_base64"])
    else:
        data = document.get("data")
    return CloudEvent(attributes, data)


def _decode_data(body: bytes, content_type: str) -> Any:
    if not body:
        return None
    media = content_type.split(";")[0].strip().lower()
    if not media:  # no content type: JSON if it parses as JSON, else text
        try:
            return json.loads(body)
        except ValueError:
            pass
    if media == JSON or media.endswith("+json"):
        try:
            return json.loads(body)
        except ValueError:
            return body
    if media.startswith("text/") or media in ("", "application/xml"):
        try:
            return body.decode()
        except UnicodeDecodeError:
            return body
    return body
