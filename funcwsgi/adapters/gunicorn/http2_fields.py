"""What an HTTP/2 request's header sections may hold, and what an ``Upgrade: h2c`` request must (http2.py).

The ``h2`` package would end the whole connection for a malformed header
section; the edge checks each one here and resets only its stream
(RFC 9113 section 8.1.1: a stream error of type PROTOCOL_ERROR).
"""

from __future__ import annotations

import base64
import binascii

from .bounds import NOT_TRAILERS

#: Request fields HTTP/2 forbids (section 8.2.2); ``te`` is allowed as ``trailers`` only.
CONNECTION_SPECIFIC = frozenset({b"connection", b"keep-alive", b"proxy-connection", b"transfer-encoding", b"upgrade"})
REQUEST_PSEUDO = frozenset({b":method", b":scheme", b":path", b":authority"})
#: Fields of an ``Upgrade: h2c`` request that end with its HTTP/1.1 connection.
UPGRADE_ONLY = frozenset({b"connection", b"upgrade", b"http2-settings", b"keep-alive", b"proxy-connection", b"te", b"transfer-encoding"})
#: Name bytes RFC 9113 section 8.2.1 forbids: controls, space, uppercase, DEL and above.
_BAD_NAME = frozenset(range(0x21)) | frozenset(range(0x41, 0x5B)) | frozenset(range(0x7F, 0x100))
#: The bytes a regular field's name may hold: ``name.translate(None, NAME_BYTES)`` is what it may not.
NAME_BYTES = bytes(byte for byte in range(0x100) if byte not in _BAD_NAME and byte != 0x3A)
#: Regular names whose field needs no more than its value checked (checked once, then known; a bounded set).
KNOWN_NAMES: set[bytes] = set()
KNOWN_NAMES_LIMIT = 1024
#: Names a request's checks look at beyond their bytes: never in KNOWN_NAMES or KNOWN_FIELDS.
_SPECIAL = CONNECTION_SPECIFIC | {b"te", b"host", b"content-length"}
#: Where a field goes: a regular field, one of the four request pseudo-header fields, or host, content-length and te,
#: whose value or count is checked every time.
REGULAR, METHOD, PATH, AUTHORITY, SCHEME, SPECIAL = range(6)
PSEUDO_PLACES = {b":method": METHOD, b":path": PATH, b":authority": AUTHORITY, b":scheme": SCHEME}
#: Whole fields (name and value) found well-formed, with their place: a request repeats most of its
#: fields from the last (h2load and proxies send the same ones), and such a field needs no second look
#: at its bytes. Bounded in count and in each value's length; started again when full.
KNOWN_FIELDS: dict[tuple[bytes, bytes], int] = {}
KNOWN_FIELDS_LIMIT = 1024
KNOWN_VALUE_LIMIT = 256


class Malformed(Exception):
    """A request HTTP/2 calls malformed (RFC 9113 section 8.1.1): its stream is reset with PROTOCOL_ERROR."""


def request_section(fields: list[tuple[bytes, bytes]]) -> tuple[str, bytes, list[tuple[bytes, bytes]], int | None]:
    """Method, target, regular fields and content-length of a request's header section; Malformed if it is (RFC 9113 section 8)."""
    method = path = authority = scheme = None
    headers: list[tuple[bytes, bytes]] = []
    host = None
    length = None
    known = KNOWN_FIELDS
    for field in fields:
        place = known.get(field)
        if place is None:
            place = field_place(field)
        if place == REGULAR:
            headers.append(field)
            continue
        name, value = field
        if place == SPECIAL:
            if name == b"host":
                if host is not None:
                    raise Malformed
                host = value
            elif name == b"content-length":
                if not value.isdigit() or (length is not None and int(value) != length):
                    raise Malformed
                length = int(value)
            headers.append(field)
            continue
        if headers:
            raise Malformed  # a pseudo-header field after a regular one
        if place == METHOD:
            if method is not None:
                raise Malformed
            method = value
        elif place == PATH:
            if path is not None:
                raise Malformed
            path = value
        elif place == AUTHORITY:
            if authority is not None:
                raise Malformed
            authority = value
        else:
            if scheme is not None:
                raise Malformed
            scheme = value
    if not method or method == b"CONNECT" or not scheme or not path:
        raise Malformed  # CONNECT (a tunnel) is not served: no function takes one
    if path[:1] != b"/" and not (path == b"*" and method == b"OPTIONS"):
        raise Malformed
    if host is None:
        if authority:
            headers.append((b"host", authority))
    elif authority is not None and authority != host:
        raise Malformed
    return method.decode("latin-1"), path, headers, length


def field_place(field: tuple[bytes, bytes]) -> int:
    """Where a field not known yet goes (see :data:`REGULAR`), its bytes checked (RFC 9113 section 8.2.1); Malformed if they are not."""
    name, value = field
    check_value(value)
    if not name:
        raise Malformed
    if name[0] == 0x3A:  # ":"
        place = PSEUDO_PLACES.get(name)
        if place is None:
            raise Malformed  # a response's pseudo-header field, or none HTTP/2 has
    elif name in KNOWN_NAMES:
        place = REGULAR
    else:
        if name.translate(None, NAME_BYTES) or name in CONNECTION_SPECIFIC or (name == b"te" and value.lower() != b"trailers"):
            raise Malformed
        if name in _SPECIAL:
            return SPECIAL
        if len(KNOWN_NAMES) < KNOWN_NAMES_LIMIT:
            KNOWN_NAMES.add(name)
        place = REGULAR
    if len(value) <= KNOWN_VALUE_LIMIT and getattr(field, "indexable", True):  # a never-indexed field's value is not kept
        if len(KNOWN_FIELDS) >= KNOWN_FIELDS_LIMIT:
            KNOWN_FIELDS.clear()
        KNOWN_FIELDS[(name, value)] = place
    return place


def trailer_section(fields: list[tuple[bytes, bytes]]) -> bool:
    """Whether the trailers hold a field that may not be a trailer; Malformed if they are."""
    refused = False
    for name, value in fields:
        if not name or name[0] == 0x3A:
            raise Malformed  # no pseudo-header field in trailers (RFC 9113 section 8.1)
        check_value(value)
        if name.translate(None, NAME_BYTES) or name in CONNECTION_SPECIFIC:
            raise Malformed  # a byte section 8.2.1 forbids (a colon too), or a connection's own field
        refused = refused or name in NOT_TRAILERS
    return refused


def check_value(value: bytes) -> None:
    """RFC 9113 section 8.2.1: no NUL, CR or LF, no whitespace at either end."""
    if value and (value[0] in (0x20, 0x09) or value[-1] in (0x20, 0x09) or b"\r" in value or b"\n" in value or b"\0" in value):
        raise Malformed


def settings_valid(payload: bytes) -> bool:
    """An ``HTTP2-Settings`` value h2 can take: base64url of whole settings, each in its range."""
    try:
        raw = base64.urlsafe_b64decode(payload + b"=" * (-len(payload) % 4))
    except (binascii.Error, ValueError):
        return False
    if len(raw) % 6:
        return False
    for index in range(0, len(raw), 6):
        code = int.from_bytes(raw[index : index + 2], "big")
        value = int.from_bytes(raw[index + 2 : index + 6], "big")
        if (code == 2 and value > 1) or (code == 4 and value > 2**31 - 1) or (code == 5 and not 16384 <= value <= 16777215):
            return False
    return True


def h2c_settings(http_version: str, headers: list[tuple[bytes, bytes]], body_limit: int) -> bytes | None:
    """The ``HTTP2-Settings`` of an HTTP/1.1 request that may be upgraded (RFC 7540 section 3.2); None: it is served as it is.

    It names ``h2c`` in ``Upgrade``, carries one ``HTTP2-Settings`` that h2 can take, both named in
    ``Connection``, and a body read whole before the switch: a ``content-length`` within the limit.
    """
    if http_version != "1.1":
        return None
    upgrade = b""
    tokens: set[bytes] = set()
    settings = []
    for name, value in headers:
        if name == b"upgrade":
            upgrade = value.strip().lower()
        elif name == b"http2-settings":
            settings.append(value.strip())
        elif name == b"connection":
            tokens.update(token.strip() for token in value.lower().split(b","))
        elif name == b"transfer-encoding":
            return None
    if upgrade != b"h2c" or len(settings) != 1 or not {b"upgrade", b"http2-settings"} <= tokens:
        return None
    if body_limit and content_length(headers) > body_limit:
        return None
    return settings[0] if settings_valid(settings[0]) else None


def content_length(headers: list[tuple[bytes, bytes]]) -> int:
    for name, value in headers:
        if name == b"content-length":
            return int(value)  # llhttp allowed one, of digits only
    return 0
