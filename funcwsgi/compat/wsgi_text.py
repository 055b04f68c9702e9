"""PEP 3333's strings as the text the client sent: what other platforms hand their functions.

A WSGI server gives ``PATH_INFO`` (percent-decoded) and every ``HTTP_*``
value as the request's raw bytes decoded as latin-1, one character per byte.
The platforms the wings stand in for give their functions text: API Gateway
and function URLs write the event as JSON, Azure's host passes strings to its
worker, Knative's func-python hands the ASGI path as UTF-8, bottle re-decodes
``PATH_INFO`` and header values as UTF-8. :func:`utf8` is that step, for every
wing.

Bytes that are not UTF-8 become U+FFFD (``errors="replace"``): JSON events
and protobuf strings can hold only valid UTF-8, so those platforms cannot
deliver the bytes as they are either, and a replacement character says plainly
that something was lost where a latin-1 reading would pass for text.
"""

from __future__ import annotations


def utf8(value: str) -> str:
    """``value``, a WSGI (latin-1) string, read as the UTF-8 it holds; invalid bytes become U+FFFD."""
    if value.isascii():
        return value
    try:
        return value.encode("latin-1").decode("utf-8", "replace")
    except UnicodeEncodeError:  # already text (an environ not made by a WSGI server): as it is
        return value
