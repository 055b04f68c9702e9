"""What llhttp lets through that RFC 9112 or RFC 9110 forbids, or does not bound: the edge's small checks beside it.

httptools (llhttp) in its strict mode frames every request on the edge; it
refuses obs-fold, bare CR or LF, bad chunk extensions, Transfer-Encoding with
Content-Length, a listed Content-Length and control bytes by itself. What it
accepts, and these checks refuse:

- a head of any size and any number of fields (llhttp has no limit): the
  request line past gunicorn's ``limit_request_line`` is ``414``, a field
  past ``limit_request_field_size``, more than ``limit_request_fields``
  fields, or a head past :data:`HEAD_LIMIT` bytes is ``431``;
- an HTTP/1.1 request without exactly one ``Host``, or with a ``Host`` that
  is a list (``Host: x, y``) or no ``uri-host [":" port]`` (``Host: a b``,
  ``Host: x@y``, ``Host: x:abc``): ``400`` (RFC 9112 section 3.2);
- chunked framing on HTTP/1.0 (RFC 9112 section 6.1): ``400``;
- a trailer field that may not be one (RFC 9110 section 6.5.1): ``400``;
- a chunk whose size alone is past the body limit (llhttp would wait for
  every byte of ``ffffffffffffffff``): ``413`` at once. httptools does not
  say a chunk's size, so the edge reads the size line llhttp just took
  (:class:`ChunkSizes`); it bounds, it does not frame.

Beside them, two things llhttp reads otherwise than RFC 9112 and RFC 9110
want: ``Expect: 100-continue`` on an HTTP/1.0 request is ignored (RFC 9110
section 10.1.1; no ``1xx`` goes to an HTTP/1.0 client, section 15.2), and an
HTTP/1.0 request whose ``Connection`` says ``close`` closes its connection
even when it says ``keep-alive`` too (:func:`asks_close`, RFC 9112 section
9.6; llhttp lets keep-alive win).

The HTTP/2 connection preface (RFC 9113 section 3.4) surfaces in llhttp as a
generic error: the edge looks for it before llhttp sees a byte.
"""

from __future__ import annotations

from typing import NamedTuple

from funcwsgi.adapters.specs import HEAD_LIMIT
from funcwsgi.middleware.http_rules import valid_host_bytes
from funcwsgi.replies import (
    HEAD_TOO_LARGE,
    INVALID_HOST,
    MALFORMED_FRAMING,
    MALFORMED_REQUEST,
    MISSING_HOST,
    UNKNOWN_CODING,
    URI_TOO_LONG,
    Reply,
    body_too_large,
)

#: What an HTTP/2 connection opens with when the client knows the server speaks it.
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
#: Fields that may not be sent as trailers: framing, routing, request modifiers and content
#: metadata (RFC 9110 section 6.5.1); a request that sends one is malformed.
NOT_TRAILERS = frozenset(
    {
        b"content-length",
        b"transfer-encoding",
        b"host",
        b"trailer",
        b"te",
        b"expect",
        b"connection",
        b"content-type",
        b"content-encoding",
        b"content-range",
        b"authorization",
        b"cookie",
    }
)


class Refused(Exception):
    """Raised from a parser callback: the request is answered with ``reply`` and its connection closed."""

    def __init__(self, reply: Reply) -> None:
        super().__init__(reply.status)
        self.reply = reply


#: The edge's refusals are the runtime's own (funcwsgi/replies.py), each sent before the connection closes.
MALFORMED = MALFORMED_REQUEST
BAD_HOST = MISSING_HOST
BAD_FRAMING = MALFORMED_FRAMING
BAD_TRAILER = MALFORMED_REQUEST


# A NamedTuple, not a frozen dataclass: that compiles six methods at every start, ~4 M instructions (issue 44).
class Limits(NamedTuple):
    """The bounds of one worker, read once from gunicorn's settings and the runtime's."""

    request_line: int  # gunicorn's limit_request_line (0: none) -> 414
    fields: int  # gunicorn's limit_request_fields -> 431
    field_size: int  # gunicorn's limit_request_field_size (0: none) -> 431
    body: int  # SERVER_MAX_BODY_SIZE (0: none) -> 413

    @property
    def body_too_large(self) -> Reply:
        return body_too_large(self.body)


class HeadBounds:
    """The bounds of a request head as the connection checks them, one comparison each, as llhttp hands the head over.

    A plain slotted object: its attributes are read at every callback of every request.
    """

    __slots__ = ("target", "field", "fields", "body")

    def __init__(self, limits: Limits) -> None:
        #: The target's bytes: past this, target_refused() says the answer (414 or 431).
        self.target = min(limits.request_line, HEAD_LIMIT) if limits.request_line else HEAD_LIMIT
        #: One field's name and value (431); without a limit of its own, a field is bounded by the head's.
        self.field = limits.field_size or HEAD_LIMIT
        self.fields = limits.fields  # fields in a head (431)
        self.body = limits.body  # 0: none


def target_refused(limits: Limits, size: int) -> Refused:
    """What a request whose target has reached ``size`` bytes (past :attr:`HeadBounds.target`) is refused with."""
    return Refused(URI_TOO_LONG if limits.request_line and size > limits.request_line else HEAD_TOO_LARGE)


#: The byte a Host that is a list holds, looked for as its int (calls.PERCENT says why).
COMMA = ord(",")
#: Host values framing() found valid, as clients send them: a request with one of these and no other field framing()
#: reads has nothing to check again (http1.py). Bounded: values past the limit are checked each time.
GOOD_HOSTS: set[bytes] = set()
GOOD_HOSTS_LIMIT = 1024
#: What framing() finds in a request without a body and without Expect (most): made once.
NO_BODY = (0, False, False)
#: The fields framing() reads: a request whose only one is a Host that is not a list has nothing else to check.
FRAMING_NAMES = frozenset({b"host", b"content-length", b"transfer-encoding", b"expect"})


def framing(version: str, headers: list[tuple[bytes, bytes]]) -> tuple[int, bool, bool]:
    """Host and Transfer-Encoding as RFC 9112 wants them (llhttp has checked the rest of the framing), and how the body comes:
    its ``Content-Length`` (0: none), whether it is chunked, whether the client expects ``100 Continue``."""
    hosts = 0
    length = 0
    chunked = expect = False
    for name, value in headers:
        if name == b"host":
            hosts += 1
            if value not in GOOD_HOSTS:
                if COMMA in value:  # as an int: `b"," in value` formats and clears a TypeError first, every request
                    raise Refused(BAD_HOST)
                if valid_host_bytes(value) is None:
                    raise Refused(INVALID_HOST)
                if len(GOOD_HOSTS) < GOOD_HOSTS_LIMIT:
                    GOOD_HOSTS.add(value)
        elif name == b"content-length":
            length = int(value)  # llhttp allows one, of digits only
        elif name == b"transfer-encoding":
            codings = [coding.strip(b" \t") for coding in value.lower().split(b",")]
            if version != "1.1" or codings[-1] != b"chunked":
                raise Refused(BAD_FRAMING)  # RFC 9112 section 6.3: chunked last, and on HTTP/1.1 only (6.1)
            if len(codings) > 1:
                raise Refused(UNKNOWN_CODING)  # a coding before chunked: not supported (section 6.1)
            chunked = True
        elif name == b"expect" and version == "1.1" and value.lower() == b"100-continue":
            expect = True  # ignored on HTTP/1.0 (RFC 9110 section 10.1.1): no 1xx goes to an HTTP/1.0 client
    if hosts > 1 or (hosts == 0 and version == "1.1"):
        raise Refused(BAD_HOST)
    return (length, chunked, expect) if length or chunked or expect else NO_BODY


def asks_close(headers: list[tuple[bytes, bytes]]) -> bool:
    """Whether a request's ``Connection`` fields hold the ``close`` option (RFC 9112 section 9.6: then it closes).

    Asked of HTTP/1.0 requests that llhttp would keep alive only: llhttp lets ``keep-alive`` win over ``close``.
    """
    for name, value in headers:
        if name == b"connection" and b"close" in [option.strip(b" \t") for option in value.lower().split(b",")]:
            return True
    return False


def check_trailer(name: bytes) -> None:
    if name in NOT_TRAILERS:
        raise Refused(BAD_TRAILER)


class ChunkSizes:
    """Reads the size line of each chunk llhttp takes, and refuses a chunk past the body limit at once.

    The connection feeds llhttp a chunked body line by line (:meth:`pieces`);
    when llhttp reports a chunk's head, the line it just took is that chunk's
    size line.
    """

    __slots__ = ("limit", "tail", "too_large")

    def __init__(self, limit: int, too_large: Reply) -> None:
        self.limit = limit
        self.too_large = too_large
        self.tail = b""  # the current line, from its start, as far as it has arrived

    @staticmethod
    def pieces(data: bytes) -> list[bytes]:
        """``data`` cut after each LF, so llhttp reports a chunk's head while its line is the last one fed."""
        pieces = []
        start = 0
        while (end := data.find(b"\n", start)) >= 0:
            pieces.append(data[start : end + 1])
            start = end + 1
        if start < len(data):
            pieces.append(data[start:])
        return pieces

    def fed(self, piece: bytes) -> None:
        """Remember the line ``piece`` belongs to (the last line fed, when llhttp saw a chunk's head)."""
        self.tail = piece if self.tail.endswith(b"\n") or not self.tail else self.tail + piece
        if len(self.tail) > 4096:
            self.tail = self.tail[-4096:]

    def check(self, received: int) -> None:
        """llhttp took a chunk's size line: 413 if that size, with what came before it, is past the limit."""
        size = self.tail.split(b";", 1)[0].strip(b" \t\r\n")
        try:
            declared = int(size, 16)
        except ValueError:
            return  # llhttp's to refuse
        if self.limit and received + declared > self.limit:
            raise Refused(self.too_large)
