"""CloudEvents over HTTP, as a caller sees them: encode a request, decode a reply.

``CloudEvent`` here is funcwsgi's one type (:mod:`funcwsgi.cloudevent`).

The testing client and ``funcwsgi invoke`` send events in binary content mode
(attributes as ``ce-*`` headers, data as the body) and read replies in either
mode (binary, or structured ``application/cloudevents+json``).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any

from .cloudevent import CloudEvent, MalformedCloudEvent
from .cloudevent import decode as decode_event

SPEC_VERSION = "1.0"
STRUCTURED = "application/cloudevents+json"
JSON = "application/json"


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
        "ce-time": time or datetime.now(timezone.utc).isoformat().replace("+00:00", "Z"),
    }
    if subject:
        headers["ce-subject"] = subject
    for name, value in (extensions or {}).items():
        headers[f"ce-{name.lower()}"] = str(value)
    if content_type or guessed:
        headers["Content-Type"] = content_type or guessed
    return headers, body


def _encode_data(data: Any) -> tuple[bytes, str | None]:
    if data is None:
        return b"", None
    if isinstance(data, bytes):
        return data, "application/octet-stream"
    if isinstance(data, str):
        return data.encode(), "text/plain; charset=utf-8"
    return json.dumps(data).encode(), JSON


def decode(headers: Mapping[str, str], body: bytes) -> CloudEvent | None:
    """The CloudEvent an HTTP message carries, in either content mode, or ``None``.

    ``headers`` may be any mapping with case-insensitive ``get`` (werkzeug's,
    ``http.client``'s) or a plain dict. The event is funcwsgi's own
    :class:`~funcwsgi.cloudevent.CloudEvent`, decoded as the runtime decodes
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
        return decode_event(lowered, body)
    except MalformedCloudEvent:
        return None
