"""HTTP's rules for what a response may carry, kept whatever the function or the server does.

- A ``HEAD`` response has no body, also when the function streams one (a
  generator, an iterator, a WSGI app it passed through): servers send what
  the app yields, and bytes after a bodiless response break the connection's
  next request.
- ``1xx``, ``204`` and ``304`` responses have no body, no ``Content-Length``
  and no ``Content-Type`` (RFC 9110 sections 8.6 and 15.3.5).
- ``write()`` works on every server: where the server's ``start_response``
  returns none (some do), what the app writes is buffered and sent ahead of
  the body it returns (PEP 3333 allows a buffering ``write``).
- A final status below ``200`` is the function's error (RFC 9110 section
  15.2: ``1xx`` is interim, a final answer must follow): ``start_response``
  raises, and the errors layer answers ``500`` and logs it.
- A request whose ``Host`` is no ``uri-host [":" port]`` (RFC 9112 section
  3.2, RFC 3986 section 3.2) is answered ``400``; the function does not run.

The servers that keep these rules themselves (the edge worker's calls, and
the ASGI side in :mod:`funcwsgi.eventloop.asgi`) apply them with
:func:`answer_fields` where they take the response, and enter the stack below
this layer.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from ..replies import BODILESS_CODES, INVALID_HOST

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

CONTENT_HEADERS = frozenset({"content-length", "content-type"})

#: A Host field's value (RFC 9112 section 3.2: ``uri-host [":" port]``, RFC 3986 section 3.2.2): an IP-literal
#: (IPv6, with a zone id of RFC 6874, or IPvFuture), or a reg-name (unreserved, sub-delims, pct-encoded; an IPv4
#: address is one), possibly empty; then a port of digits, possibly empty. The IPv6 address itself is read leniently.
HOST_PATTERN = (
    r"(?:\[(?:[0-9A-Fa-f:.]+(?:%25(?:[-A-Za-z0-9._~]|%[0-9A-Fa-f]{2})+)?|[vV][0-9A-Fa-f]+\.[-A-Za-z0-9._~!$&'()*+,;=:]+)\]"
    r"|(?:[-A-Za-z0-9._~!$&'()*+,;=]|%[0-9A-Fa-f]{2})*)"
    r"(?::[0-9]*)?"
)
_valid_host = re.compile(HOST_PATTERN).fullmatch
#: The same, for a value as the edge reads it (bytes).
valid_host_bytes = re.compile(HOST_PATTERN.encode("ascii")).fullmatch


def valid_host(value: str) -> bool:
    """Whether ``value`` is a Host field's value RFC 9112 section 3.2 allows (an empty one too)."""
    return _valid_host(value) is not None


#: Host values found valid, as clients send them (a few per service): the usual call checks a set, not the pattern.
#: Bounded, since clients choose them: values past the limit are matched each time.
_GOOD_HOSTS: set[str] = set()
_GOOD_HOSTS_LIMIT = 1024


def refused_host(host: str) -> bool:
    """Whether a request with this Host value is answered :data:`INVALID_HOST` (the layer, and the ASGI side)."""
    if host in _GOOD_HOSTS:
        return False
    if _valid_host(host) is None:
        return True
    if len(_GOOD_HOSTS) < _GOOD_HOSTS_LIMIT:
        _GOOD_HOSTS.add(host)
    return False


def interim_answer(status: str) -> ValueError:
    """What a final answer whose status is below ``200`` raises (RFC 9110 section 15.2: ``1xx`` is interim)."""
    return ValueError(
        f"the function gave the interim status {status[:40]!r} as its answer: an answer's status is 200 or more (RFC 9110 section 15.2)"
    )


def without_content_headers(headers: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(name, value) for name, value in headers if name.lower() not in CONTENT_HEADERS]


#: Fields of the connection, not of the answer (RFC 9110 section 7.6.1): the server frames the answer and keeps the
#: connection, so a function's own are dropped, as the edge drops them. Left in, one server closed the connection
#: unanswered on a function's Transfer-Encoding and another answered 500 (tests/adapters/test_http_rules.py).
CONNECTION_FIELDS = frozenset({"connection", "transfer-encoding", "keep-alive", "upgrade"})
# What an answer's field is to the rules, by its name as functions spell it (_field_kind).
_PLAIN, _LENGTH, _CONNECTION = 0, 1, 2
_KINDS: dict[str, int] = {}
_KINDS_LIMIT = 1024


def _field_kind(name: str) -> int:
    kind = _KINDS.get(name)
    if kind is None:
        lower = name.lower()
        kind = _LENGTH if lower == "content-length" else _CONNECTION if lower in CONNECTION_FIELDS else _PLAIN
        if len(_KINDS) < _KINDS_LIMIT:  # names are the function's choice: bounded
            _KINDS[name] = kind
    return kind


def agreed_length(value: str, previous: str | None) -> str:
    """A response's ``Content-Length`` ``value``, checked: ``1*DIGIT`` and, after ``previous``, the same number (RFC 9110 section 8.6).

    The one statement of the rule: this layer's and the edge's (``calls.check_head``); what it raises is the function's ``500``.
    """
    if not (value.isascii() and value.isdigit()):
        raise ValueError(f"the response's Content-Length {value[:40]!r} is not a number of digits (RFC 9110 section 8.6)")
    if previous is not None and int(value) != int(previous):
        raise ValueError(f"the response's Content-Length fields differ ({previous[:40]} and {value[:40]}; RFC 9110 section 8.6)")
    return value


def answer_fields(status: str, headers: list[tuple[str, str]], head: bool) -> tuple[list[tuple[str, str]], bool]:
    """The fields a response goes out with, and whether it goes without a body (``head``: the request was ``HEAD``).

    The one place the rules are applied: this layer, and the servers that keep them themselves (the edge, the ASGI side).
    A status below ``200`` raises :func:`interim_answer`, a Content-Length that is not digits (or differs from another)
    :func:`agreed_length`'s error: the function's errors, which the errors layer answers ``500``. The function's connection fields
    are dropped.
    """
    code = status[:3]
    if code < "200":
        raise interim_answer(status)
    if code in BODILESS_CODES:  # bodiless(status), inlined: every answer passes here
        return without_content_headers(headers), True
    length = None
    dropped = False  # a connection field, or a Content-Length said twice
    for name, value in headers:
        kind = _field_kind(name)
        if kind == _LENGTH:
            dropped = dropped or length is not None
            length = agreed_length(value, length)
        elif kind == _CONNECTION:
            dropped = True
    if dropped:
        return _own_fields_only(headers), head
    return headers, head


def _own_fields_only(headers: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """``headers`` without connection fields, and with one Content-Length of the same ones."""
    kept = []
    length_kept = False
    for name, value in headers:
        kind = _field_kind(name)
        if kind == _CONNECTION or (kind == _LENGTH and length_kept):
            continue
        length_kept = length_kept or kind == _LENGTH
        kept.append((name, value))
    return kept


class HttpRulesMiddleware:
    """The outermost layer of :data:`funcwsgi.stack.LAYERS`: bodiless responses stay bodiless; ``write()`` always works;
    a Host that is not one is answered ``400``."""

    def __init__(self, app: WSGIApplication) -> None:
        self.app = app

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        host = environ.get("HTTP_HOST")
        if host is not None and refused_host(host):
            return INVALID_HOST(environ, start_response)
        call = _Call(start_response, head=environ.get("REQUEST_METHOD") == "HEAD")
        body = self.app(environ, call.start_response)
        if call.bodiless or (call.status is None and call.head):
            return call.discard(body)
        if call.written is not None:
            return _WrittenFirst(call.written, body)
        return body

    def __repr__(self) -> str:
        return "HttpRulesMiddleware()"


class _Call:
    """One call's response as the layer sees it start."""

    def __init__(self, server_start: StartResponse, *, head: bool) -> None:
        self.server_start = server_start
        self.head = head
        self.status: str | None = None
        self.bodiless = False
        self.written: list[bytes] | None = None

    def start_response(self, status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Callable[[bytes], object]:
        headers, self.bodiless = answer_fields(status, headers, self.head)  # raises for a 1xx: before the status is kept
        self.status = status
        # Typed to return write(), but some servers' start_response returns None.
        write: Any = self.server_start(status, headers, exc_info) if exc_info is not None else self.server_start(status, headers)
        if self.bodiless:
            return _ignore
        if callable(write):
            return write  # type: ignore[no-any-return]  # the server's write(), typed Any above
        self.written = []
        return self.written.append

    def started(self) -> bool:
        return self.status is not None

    def discard(self, body: Iterable[bytes]) -> list[bytes]:
        """Run the body only as far as it takes to start the response, then close it."""
        try:
            if not self.started():  # a generator app starts its response on first iteration
                for _ in body:
                    if self.started():
                        break
        finally:
            close = getattr(body, "close", None)
            if close is not None:
                close()
        return []


def _ignore(data: bytes) -> None:
    """``write()`` of a bodiless response: nothing to send."""


class _WrittenFirst:
    """The body, after what the app passed to a buffering ``write()`` (also while it iterates)."""

    def __init__(self, written: list[bytes], body: Iterable[bytes]) -> None:
        self.written = written
        self.body = body

    def __iter__(self) -> Iterator[bytes]:
        written = self.written
        for chunk in self.body:
            while written:
                yield written.pop(0)
            yield chunk
        while written:
            yield written.pop(0)

    def close(self) -> None:
        close = getattr(self.body, "close", None)
        if close is not None:
            close()
