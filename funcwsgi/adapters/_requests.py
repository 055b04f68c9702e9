"""A request read on a worker's event loop, before any function thread sees it.

:class:`PendingRequest` takes the bytes of one request as they arrive and
says when it is ready for a thread: its head is complete and its body is
there too (held in memory, or in a temporary file once it is large), or the
body cannot or should not be waited for (its length is unknown, or it is
over the body limit, which the body-limit layer then answers). A head that
grows past a limit is refused at once, with the status RFC 9110 names. The
loop never parses the request for the function: gunicorn's parser does that,
on the thread, from the bytes read here (:class:`BufferedUnreader`). So that
the two never frame one request differently (which is how requests are
smuggled), the loop refuses, with RFC 9112's ``400`` and a close, every
request whose target, field lines, Content-Length, Transfer-Encoding or
chunks could be read more than one way; the worker then keeps a connection
only if gunicorn's parser ended the request where the loop did
(``leftover_length``). tests/reliability/test_framing.py holds the cases.
"""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass
from typing import IO, Any

from gunicorn.http.unreader import Unreader

from funcwsgi.replies import BUSY_TEXT, Reply

#: Longest request head read on the loop: Node's default is 16 KiB, nginx's 4 x 8 KiB;
#: gunicorn's own field limits (100 fields of up to 8190 bytes) still apply within it.
HEAD_LIMIT = 64 * 1024
#: Body bytes kept in memory per request; beyond this the body goes to a temporary file.
BODY_IN_MEMORY = 256 * 1024
#: A chunked body's framing may add this much to the body limit before it is handed over.
CHUNKED_SLACK = 64 * 1024
LONGEST_CHUNK_LINE = 4096
HEX = frozenset(b"0123456789abcdefABCDEF")
#: In a chunk line, or in a framing field's value: a control character other than HTAB.
FORBIDDEN_IN_LINES = CONTROL = re.compile(rb"[\x00-\x08\x0a-\x1f\x7f]")

#: RFC 9110 5.6.2's token: a field name, a method, a transfer coding.
TOKEN = rb"[!#$%&'*+.^_`|~0-9A-Za-z-]+"
WHITESPACE = (b" ", b"\t", b"")
TRAILER_LINE = re.compile(TOKEN + rb":.*", re.S)
#: The fields whose values the loop reads (lower-cased); any other field's value is gunicorn's to check.
FRAMING_FIELDS = frozenset({b"content-length", b"transfer-encoding", b"host", b"expect"})
ABSOLUTE_FORM = re.compile(rb"[Hh][Tt][Tt][Pp][Ss]?://[^/?#]*")

PROBE_METHODS = frozenset({b"GET", b"HEAD"})


class Refusal:
    """A request the loop answers itself, as raw HTTP encoded once, and then closes the connection."""

    __slots__ = ("reply", "wire")

    def __init__(self, code: int, text: str, headers: tuple[tuple[str, str], ...] = ()) -> None:
        self.reply = Reply(code, text, headers=headers)
        self.wire = self.reply.http_head(("Connection", "close")) + self.reply.body

    def __repr__(self) -> str:
        return f"Refusal({self.reply.status!r})"


RETRY_AFTER_SECONDS = 1
#: How often a worker's loop looks for connections past their deadline (both gunicorn workers).
SWEEP_SECONDS = 0.25
#: The slow-client limits' answers, the same from the thread worker and the event-loop worker.
REQUEST_TIMEOUT = Refusal(408, "the request did not arrive in time")
OVERLOADED = Refusal(503, BUSY_TEXT, (("Retry-After", str(RETRY_AFTER_SECONDS)),))
URI_TOO_LONG = Refusal(414, "the request line is too long")
HEAD_TOO_LARGE = Refusal(431, "the request head is too large")
BAD_CHUNKS = Refusal(400, "the chunked request body is malformed")
#: RFC 9112 sections 3, 5 and 6: a request whose target, fields or framing cannot be read one way only.
BAD_REQUEST = Refusal(400, "the request is malformed")
#: The largest Content-Length a request may declare: what a signed 64-bit length holds. gunicorn 27's
#: parser takes any number, and a body it then waits for would eat the next request.
LONGEST_LENGTH = 2**63 - 1
BAD_FRAMING = Refusal(400, "the request's Content-Length or Transfer-Encoding is malformed")
BAD_HOST = Refusal(400, "an HTTP/1.1 request needs exactly one Host field")
UNKNOWN_CODING = Refusal(501, "the request's transfer coding is not supported")


@dataclass(frozen=True)
class Limits:
    request_line: int  # longest request line (414 beyond)
    body: int  # longest body waited for; 0: no limit


class Ready:
    """The request can go to a thread; ``buffered``: all of its body is here."""

    def __init__(self, buffered: bool) -> None:
        self.buffered = buffered


READY_BUFFERED = Ready(True)
READY_UNBUFFERED = Ready(False)


class ChunkedScan:
    """Finds where a chunked body ends (RFC 9112 section 7.1), fed as the bytes arrive.

    As strict as the grammar: every line ends in CRLF and holds no other CR,
    LF or NUL; a size is 1 to 16 hex digits, with whitespace only before a
    chunk extension's ``;``; a trailer line is a field name, a colon and a
    value, never folded. Anything else is refused before a thread or
    gunicorn's parser sees it, so the two never read one body differently.
    """

    def __init__(self) -> None:
        self.state = "size"
        self.line = bytearray()
        self.left = 0
        self.end = -1  # once the body ended: how many bytes of the last fed data belonged to it

    def feed(self, data: bytes) -> bool:
        """True once the body (and its trailer section) ended; ValueError on framing that is not chunked."""
        i, n = 0, len(data)
        while i < n:
            if self.state in ("size", "trailer"):
                j = data.find(b"\n", i)
                if j < 0:
                    self.line += data[i:]
                    if len(self.line) > LONGEST_CHUNK_LINE:
                        raise ValueError("chunk line too long")
                    return False
                self.line += data[i : j + 1]
                i = j + 1
                line = bytes(self.line)
                self.line.clear()
                if len(line) > LONGEST_CHUNK_LINE or not line.endswith(b"\r\n"):
                    raise ValueError("chunk line not ended by CRLF")
                line = line[:-2]
                if FORBIDDEN_IN_LINES.search(line):
                    raise ValueError("CR, LF or a control character in a chunk line")
                if self.state == "trailer":
                    if not line:
                        self.end = i
                        return True
                    if not TRAILER_LINE.fullmatch(line):
                        raise ValueError("trailer line is not a field")
                    continue
                size, semicolon, _ = line.partition(b";")
                if semicolon:
                    size = size.rstrip(b" \t")  # RFC 9112 7.1.1: BWS before a chunk extension only
                if not size or len(size) > 16 or not set(size) <= HEX:
                    raise ValueError("chunk size is not hexadecimal")
                self.left = int(size, 16)
                self.state = "data" if self.left else "trailer"
            elif self.state == "data":
                take = min(self.left, n - i)
                i += take
                self.left -= take
                if not self.left:
                    self.state, self.left = "crlf", 2
            else:  # the CRLF after a chunk's data
                if data[i] != b"\r\n"[2 - self.left]:
                    raise ValueError("chunk data not followed by CRLF")
                i += 1
                self.left -= 1
                if not self.left:
                    self.state = "size"
        return False


class PendingRequest:
    """One request as far as it has arrived."""

    def __init__(self, limits: Limits, data: bytes = b"") -> None:
        self.limits = limits
        self.head = bytearray(data)
        self.head_end = -1
        self.method = b""
        self.path = b""
        self.length: int | None = None
        self.chunks: ChunkedScan | None = None
        self.expect_continue = False
        self.continue_sent = False
        self.body = bytearray()
        self.spool: IO[bytes] | None = None
        self.body_seen = 0
        self.body_end = 0  # the length of this request's body with its framing, once known

    @property
    def started(self) -> bool:
        return bool(self.head) or self.head_end >= 0

    @property
    def head_complete(self) -> bool:
        return self.head_end >= 0

    def feed(self, chunk: bytes) -> Ready | Refusal | None:
        """Take ``chunk``; None while more is needed."""
        if self.head_end < 0:
            self.head += chunk
            return self._scan_head()
        return self._take_body(chunk)

    def wants_continue(self) -> bool:
        """The client waits for ``100 Continue`` before it sends the body."""
        return self.expect_continue and not self.continue_sent

    def _scan_head(self) -> Ready | Refusal | None:
        while self.head.startswith(b"\r\n"):  # empty lines before a request line are ignored (RFC 9112 2.2)
            del self.head[:2]
        line_end = self.head.find(b"\r\n")
        if (line_end < 0 and len(self.head) > self.limits.request_line) or line_end > self.limits.request_line:
            return URI_TOO_LONG
        end = self.head.find(b"\r\n\r\n")
        if end < 0 or end + 4 > HEAD_LIMIT:
            return HEAD_TOO_LARGE if len(self.head) > HEAD_LIMIT else None
        self.head_end = end + 4
        rest = bytes(self.head[self.head_end :])
        del self.head[self.head_end :]
        refusal = self._read_head(bytes(self.head[:end]))
        if refusal is not None:
            return refusal
        if self.limits.body and self.length is not None and self.length > self.limits.body:
            return READY_UNBUFFERED  # the body-limit layer answers 413 without reading it
        if self.length is None and self.chunks is None:
            self.length = 0
        if self.length == 0:
            self.expect_continue = False
        return self._take_body(rest)

    def _read_head(self, head: bytes) -> Refusal | None:
        """The method, the path and the framing, from the head; a refusal where RFC 9112 asks for one.

        Refused here, before gunicorn's parser could read the request another
        way: a target that is not origin- or absolute-form; a field line with
        no colon, whitespace before it, a fold, or a CR, LF or NUL in it; an
        HTTP/1.1 request without exactly one Host; a Content-Length that is not
        one number; a Transfer-Encoding that is not exactly ``chunked`` (400
        when chunked is not its last coding, as section 6.3 requires; 501 for
        a coding before it), or beside a Content-Length, or on HTTP/1.0.
        """
        crs = head.count(b"\r")
        if crs != head.count(b"\n") or crs != head.count(b"\r\n") or b"\0" in head:
            return BAD_REQUEST  # a bare CR or LF, or a NUL: counted at C speed, once per head
        lines = head.split(b"\r\n")
        parts = lines[0].split(b" ")
        if len(parts) != 3 or not lines[0].isascii():
            # A request line is ASCII (RFC 9112 section 3, RFC 3986); gunicorn's parser refuses
            # other bytes too, with a page of its own that echoes the line back.
            return BAD_REQUEST
        self.method, target, version = parts
        if target[:1] != b"/":
            absolute = ABSOLUTE_FORM.match(target)
            if absolute is not None:
                target = b"/" + target[absolute.end() :].lstrip(b"/")
            elif not (target == b"*" and self.method == b"OPTIONS") and self.method != b"CONNECT":
                return BAD_REQUEST
        self.path = target.split(b"?", 1)[0]
        lengths, codings, hosts = [], [], 0
        for line in lines[1:]:
            name, colon, value = line.partition(b":")
            if not colon or name[:1] in WHITESPACE or name[-1:] in WHITESPACE:
                return BAD_REQUEST  # no colon (or an empty line), whitespace before it, a folded line
            name = name.lower()
            if name not in FRAMING_FIELDS:
                continue  # gunicorn's parser checks the rest of its name and its value
            value = value.strip(b" \t")
            if name == b"content-length":
                lengths.append(value)
            elif name == b"transfer-encoding":
                codings += [coding.strip(b" \t").lower() for coding in value.split(b",")]
            elif name == b"host":
                hosts += 1
            elif name == b"expect" and value.lower() == b"100-continue":
                self.expect_continue = True
            else:
                continue
            if CONTROL.search(value):
                return BAD_FRAMING if name != b"host" else BAD_HOST
        if version == b"HTTP/1.1" and hosts != 1:
            return BAD_HOST
        if codings:
            if lengths or version != b"HTTP/1.1" or codings[-1] != b"chunked" or codings.count(b"chunked") != 1:
                return BAD_FRAMING
            if len(codings) > 1:
                return UNKNOWN_CODING
            self.chunks = ChunkedScan()
        elif lengths:
            if len(lengths) != 1 or not lengths[0].isdigit() or not lengths[0].isascii():
                return BAD_FRAMING
            self.length = int(lengths[0])
            if self.length > LONGEST_LENGTH:
                return BAD_FRAMING
        return None

    @property
    def leftover_length(self) -> int:
        """How many of the bytes read belong to the requests after this one (pipelined), by this framer's reading."""
        return self.body_seen - self.body_end

    def _take_body(self, chunk: bytes) -> Ready | Refusal | None:
        before = self.body_seen
        if chunk:
            self._store(chunk)
        if self.chunks is not None:
            try:
                ended = self.chunks.feed(chunk)
            except ValueError:
                return BAD_CHUNKS
            if ended:
                self.body_end = before + self.chunks.end
                return READY_BUFFERED
            if self.limits.body and self.body_seen > self.limits.body + CHUNKED_SLACK:
                return READY_UNBUFFERED  # the body-limit layer answers 413
            return None
        assert self.length is not None
        self.body_end = self.length
        return READY_BUFFERED if self.body_seen >= self.length else None

    def _store(self, chunk: bytes) -> None:
        self.body_seen += len(chunk)
        if self.spool is None:
            self.body += chunk
            if len(self.body) <= BODY_IN_MEMORY:
                return
            self.spool = tempfile.TemporaryFile()
            self.spool.write(self.body)
            self.body.clear()
        else:
            self.spool.write(chunk)

    def head_bytes(self) -> bytes:
        """The head as the thread's parser must see it: without the Expect the loop already answered."""
        if not self.continue_sent:
            return bytes(self.head)
        lines = bytes(self.head).split(b"\r\n")
        return b"\r\n".join(line for line in lines if not line.lower().startswith(b"expect:"))

    def unreader(self, sock: Any) -> BufferedUnreader:
        if self.spool is not None:
            self.spool.seek(0)
        return BufferedUnreader(sock, self.head_bytes() + bytes(self.body), self.spool)

    def is_probe(self, paths: frozenset[bytes]) -> bool:
        return self.method in PROBE_METHODS and self.path in paths

    def close(self) -> None:
        if self.spool is not None:
            self.spool.close()
            self.spool = None


class BufferedUnreader(Unreader):  # type: ignore[misc]  # gunicorn is untyped: its classes are Any
    """What the loop read (in memory, then in a temporary file), then the socket: gunicorn's parser reads from this."""

    def __init__(self, sock: Any, data: bytes, spool: IO[bytes] | None) -> None:
        super().__init__()
        self.sock = sock
        self.buf.write(data)
        self.spool = spool

    def chunk(self, size_hint: int | None = None) -> bytes:
        if self.spool is not None:
            spooled = self.spool.read(65536)
            if spooled:
                return spooled
            self.close()
        received: bytes = self.sock.recv(65536)
        return received

    def rest(self) -> bytes:
        """What is left unread in the buffers (never from the socket): the next pipelined requests."""
        left: bytes = self.buf.getvalue()
        if self.spool is not None:
            left += self.spool.read()
            self.close()
        return left

    def close(self) -> None:
        if self.spool is not None:
            self.spool.close()
            self.spool = None
