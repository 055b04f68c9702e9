"""CloudEvents over HTTP, and funcwsgi's own CloudEvent: the same whatever ``cloudevents`` is installed.

Functions written for either generation of the ``cloudevents`` library read
events in that generation's idiom: 1.x ``event["type"]``, ``event.data``,
``get_attributes()``; 2.x (and Kyma's python314 runtime) ``event.get_type()``,
``get_time()``, ``get_extension(name)``. :class:`CloudEvent` answers both,
so a function's code does not depend on which generation another package
pulled in. Decoding and encoding are done here, not by the library, so what a
function receives and what goes out (replies, published events) is the same
byte for byte under both; the library is only needed to turn its own events,
made by a function, into this type (:mod:`funcwsgi.compat.cloudevents_lib`).

Attributes are kept as they travelled: strings from binary-mode headers,
JSON values from a structured body, nothing filled in by decoding (no
``time`` the sender did not set). Data follows the rules of the CloudEvents
JSON format: JSON for a JSON content type (or none), else text, else bytes.

The runtime decodes requests with :func:`from_http` and encodes replies and
published events with :func:`to_binary` / :func:`to_structured`; the testing
client and ``funcwsgi invoke`` send events with :func:`encode_binary` and read
replies with :func:`decode`.
"""

from __future__ import annotations

import base64
import json
import re
import uuid
from collections.abc import Iterator, Mapping, MutableMapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote

if TYPE_CHECKING:
    from werkzeug.datastructures import Headers

SPEC_VERSION = "1.0"
STRUCTURED = "application/cloudevents+json"
BATCH = "application/cloudevents-batch+json"
SPEC_VERSIONS = ("1.0", "0.3")
REQUIRED = ("id", "source", "specversion", "type")
#: The attributes the specification defines; every other one is an extension.
CORE_ATTRIBUTES = frozenset(REQUIRED + ("datacontenttype", "dataschema", "schemaurl", "subject", "time", "datacontentencoding"))
_NAME = re.compile(r"[a-z0-9]+\Z")
_JSON_MEDIA = re.compile(r"(application|text)/([a-zA-Z0-9\-.]+\+)?json\Z")
# Printable ASCII but space, '"' and '%' travel as they are in a header (HTTP binding 3.1.3.2).
_HEADER_SAFE = "".join(c for c in map(chr, range(0x21, 0x7F)) if c not in ' "%')


class MalformedCloudEvent(ValueError):
    """A message claims to be a CloudEvent but is not a valid one; ``str()`` is a short reason."""


class CloudEvent(MutableMapping[str, Any]):
    """A CloudEvent: its attributes as a mapping (``event["type"]``), its ``data``.

    ``CloudEvent(attributes, data)`` makes a new event, as both library
    generations do: ``type`` and ``source`` are required, ``id`` (a UUID),
    ``specversion`` (``1.0``) and ``time`` (now) are filled in when missing.
    Iterating gives the attribute names; ``data`` is not an attribute.
    """

    __slots__ = ("_attributes", "data")
    __hash__ = None  # type: ignore[assignment]  # mutable, as the libraries' events are

    def __init__(self, attributes: Mapping[str, Any], data: Any = None) -> None:
        given = dict(attributes)
        given.setdefault("specversion", "1.0")
        if not given.get("id"):
            given["id"] = str(uuid.uuid4())
        if given.get("time") is None:
            given["time"] = datetime.now(UTC)
        self._attributes = _checked(given, ValueError)
        self.data = data

    @classmethod
    def create(cls, attributes: Mapping[str, Any], data: Any = None) -> CloudEvent:
        """The 1.x spelling of the constructor."""
        return cls(attributes, data)

    @classmethod
    def _as_sent(cls, attributes: dict[str, Any], data: Any) -> CloudEvent:
        """An event exactly as it travelled (already checked): nothing filled in."""
        event = cls.__new__(cls)
        event._attributes = attributes
        event.data = data
        return event

    # -- the mapping (1.x) ------------------------------------------------------

    def __getitem__(self, name: str) -> Any:
        return self._attributes[name]

    def __setitem__(self, name: str, value: Any) -> None:
        self._attributes[name] = value

    def __delitem__(self, name: str) -> None:
        del self._attributes[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._attributes)

    def __len__(self) -> int:
        return len(self._attributes)

    def get_attributes(self) -> dict[str, Any]:
        """A copy of the attributes (without data)."""
        return dict(self._attributes)

    def get_data(self) -> Any:
        return self.data

    @property
    def attributes(self) -> dict[str, Any]:
        """The attributes, as :meth:`get_attributes` gives them."""
        return dict(self._attributes)

    # -- the getters (2.x, Kyma python314) --------------------------------------

    def get_id(self) -> str:
        return self._attributes["id"]  # type: ignore[no-any-return]

    def get_source(self) -> str:
        return self._attributes["source"]  # type: ignore[no-any-return]

    def get_type(self) -> str:
        return self._attributes["type"]  # type: ignore[no-any-return]

    def get_specversion(self) -> str:
        return self._attributes["specversion"]  # type: ignore[no-any-return]

    def get_datacontenttype(self) -> str | None:
        return self._attributes.get("datacontenttype")

    def get_dataschema(self) -> str | None:
        return self._attributes.get("dataschema")

    def get_subject(self) -> str | None:
        return self._attributes.get("subject")

    def get_time(self) -> datetime | None:
        """``time`` as a timezone-aware datetime (``event["time"]`` is the string as sent)."""
        value = self._attributes.get("time")
        return None if value is None else parse_time(value)

    def get_extension(self, name: str) -> Any:
        return self._attributes.get(name)

    def get_extensions(self) -> dict[str, Any]:
        """The attributes the specification does not define."""
        return {name: value for name, value in self._attributes.items() if name not in CORE_ATTRIBUTES}

    # Convenience of the caller-side client (``funcwsgi.testing``).
    type = property(get_type)
    source = property(get_source)
    id = property(get_id)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CloudEvent):
            return NotImplemented
        return self._attributes == other._attributes and self.data == other.data

    def __repr__(self) -> str:
        return f"CloudEvent(attributes={self._attributes!r}, data={self.data!r})"


def parse_time(value: Any) -> datetime:
    if isinstance(value, datetime):
        return value
    return datetime.fromisoformat(str(value))


def time_string(value: datetime) -> str:
    """RFC 3339, UTC written ``Z`` as the libraries write it."""
    text = value.isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


def _checked(attributes: dict[str, Any], error: type[ValueError]) -> dict[str, Any]:
    """The attributes, if the specification allows them; ``time`` as its RFC 3339 string."""
    required = ("id", "source", "type", "specversion")
    missing = [name for name in required if attributes.get(name) is None or attributes[name] == ""]
    if missing:
        raise error(f"missing or empty CloudEvent attribute(s): {', '.join(missing)}")
    typed = [f"{name} ({attributes[name].__class__.__name__} {attributes[name]!r})" for name in required if not isinstance(attributes[name], str)]
    if typed:
        raise error(f"invalid CloudEvent attribute(s) {', '.join(typed)}: expected strings")
    if attributes["specversion"] not in SPEC_VERSIONS:
        raise error(f"invalid CloudEvent: specversion must be one of {', '.join(SPEC_VERSIONS)}")
    names = [name for name in attributes if name == "data" or not _NAME.match(name)]
    if names:
        raise error(f"invalid CloudEvent attribute name(s) {', '.join(map(repr, sorted(names)))}: expected lower-case letters and digits")
    for name in [name for name, value in attributes.items() if value is None]:
        del attributes[name]  # CloudEvents has no null attributes
    time = attributes.get("time")
    if isinstance(time, datetime):
        if time.tzinfo is None:
            raise error("invalid CloudEvent: time must be timezone-aware")
        attributes["time"] = time_string(time)
    elif time is not None:
        try:
            parse_time(time)
        except (TypeError, ValueError):
            raise error("invalid CloudEvent: time is not an RFC 3339 timestamp") from None
    return attributes


# -- decoding --------------------------------------------------------------------


def from_http(headers: Mapping[str, str], body: bytes) -> CloudEvent:
    """The CloudEvent of an HTTP message (``headers`` with lower-case names).

    Binary mode when a ``ce-`` header is present, else structured mode
    (``application/cloudevents+json``). Raises :class:`MalformedCloudEvent`.
    """
    if any(name.startswith("ce-") for name in headers):
        missing = [name for name in REQUIRED if not headers.get("ce-" + name)]
        if missing:
            raise MalformedCloudEvent("missing required CloudEvent header(s): " + ", ".join("ce-" + name for name in missing))
        attributes: dict[str, Any] = {name[3:]: unquote(value) for name, value in headers.items() if name.startswith("ce-")}
        content_type = headers.get("content-type")
        if content_type:
            attributes["datacontenttype"] = content_type
        data = decode_data(body, content_type)
    else:
        try:
            document = json.loads(body)
        except (ValueError, RecursionError):
            raise MalformedCloudEvent("the structured CloudEvent is not valid JSON") from None
        if not isinstance(document, dict):
            raise MalformedCloudEvent("the structured CloudEvent must be a JSON object")
        missing = [name for name in REQUIRED if not isinstance(document.get(name), str) or not document[name]]
        if missing:
            raise MalformedCloudEvent("missing required CloudEvent attribute(s): " + ", ".join(missing))
        data = document.pop("data", None)
        encoded = document.pop("data_base64", None)
        if encoded is not None:
            try:
                data = base64.b64decode(encoded, validate=True)
            except (TypeError, ValueError):
                raise MalformedCloudEvent("invalid CloudEvent: data_base64 is not base64") from None
        attributes = document
    return CloudEvent._as_sent(_checked(attributes, MalformedCloudEvent), data)


def decode_data(body: bytes, content_type: str | None) -> Any:
    """A binary-mode body: JSON for a JSON content type (or none), else text, else bytes."""
    if not body:
        return None
    if _is_json(content_type):
        try:
            return json.loads(body)
        except (ValueError, RecursionError):
            pass
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        return body


def _is_json(content_type: str | None) -> bool:
    if not content_type:
        return True
    return bool(_JSON_MEDIA.match(content_type.split(";", 1)[0].strip()))


# -- encoding --------------------------------------------------------------------


def to_binary(event: CloudEvent) -> tuple[dict[str, str], bytes]:
    """(headers, body) of the event in binary content mode.

    ``datacontenttype`` is the ``Content-Type``; without one, the body's type
    is said as the runtime says it for a returned value (JSON, text, bytes).
    """
    headers: dict[str, str] = {}
    content_type = None
    for name, value in event._attributes.items():
        if name == "datacontenttype":
            content_type = str(value)
        else:
            headers["ce-" + name] = quote(_string(value), safe=_HEADER_SAFE)
    body, guessed = _data_bytes(event.data, content_type)
    chosen = content_type or guessed
    if chosen:
        headers["Content-Type"] = chosen
    return headers, body


def to_structured(event: CloudEvent) -> tuple[dict[str, str], bytes]:
    """(headers, body) of the event in structured content mode (one JSON document)."""
    document = dict(event._attributes)
    data = event.data
    if isinstance(data, (bytes, bytearray, memoryview)):
        document["data_base64"] = base64.b64encode(bytes(data)).decode("ascii")
    elif data is not None:
        document["data"] = data if _is_json(document.get("datacontenttype")) else str(data)
    return {"Content-Type": STRUCTURED}, json.dumps(document, default=_json_default).encode()


def _data_bytes(data: Any, content_type: str | None) -> tuple[bytes, str | None]:
    if data is None:
        return b"", None
    if isinstance(data, (bytes, bytearray, memoryview)):
        return bytes(data), "application/octet-stream"
    if isinstance(data, str):
        return data.encode(), "text/plain; charset=utf-8"
    if content_type and not _is_json(content_type):
        return str(data).encode(), None
    return json.dumps(data, default=_json_default).encode(), "application/json"


def _string(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime):
        return time_string(value)
    return str(value)


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime):
        return time_string(value)
    raise TypeError(f"a {type(value).__name__} cannot be written as JSON")


# -- a caller's side: events sent to a function, replies read ------------------------


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
    attributes = {
        "specversion": SPEC_VERSION,
        "id": id or str(uuid.uuid4()),
        "source": source,
        "type": type,
        "time": time or datetime.now(UTC).isoformat().replace("+00:00", "Z"),
    }
    if subject:
        attributes["subject"] = subject
    for name, value in (extensions or {}).items():
        attributes[name.lower()] = str(value)
    # Percent-encoded as the HTTP binding asks (and to_binary does): a '%' or a character beyond ASCII arrives as sent.
    headers = {"ce-" + name: quote(value, safe=_HEADER_SAFE) for name, value in attributes.items()}
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
    return json.dumps(data).encode(), "application/json"


def decode(headers: Mapping[str, str] | Headers, body: bytes) -> CloudEvent | None:
    """The CloudEvent an HTTP message carries, in either content mode, or ``None``.

    ``headers`` may be any mapping with case-insensitive ``get`` (werkzeug's,
    ``http.client``'s) or a plain dict. The event is funcwsgi's own
    :class:`~funcwsgi.cloudevents.CloudEvent`, decoded as the runtime decodes
    a request; a message that is no valid CloudEvent gives ``None``.
    """
    items = headers.items() if hasattr(headers, "items") else []
    lowered = {name.lower(): value for name, value in items}
    content_type = lowered.get("content-type") or ""
    structured = content_type.split(";")[0].strip().lower() == STRUCTURED
    if not structured and "ce-specversion" not in lowered:
        return None
    if structured:
        lowered = {"content-type": content_type}
    else:
        lowered = {name: value for name, value in lowered.items() if name.startswith("ce-") or name == "content-type"}
    try:
        return from_http(lowered, body)
    except MalformedCloudEvent:
        return None
