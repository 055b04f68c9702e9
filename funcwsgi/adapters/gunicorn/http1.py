"""HTTP/1.1 on the edge: llhttp (httptools, strict) reads each request on the loop; the call runner runs it.

One :class:`Http1Connection` per client connection. It feeds what arrives
to llhttp, keeps the bounds of :mod:`.bounds` beside it, and turns each
complete request (head and body, the body in memory and past 256 KiB in a
temporary file) into an :class:`Http1Exchange` for the
:class:`~.calls.CallRunner`. So a slow or hostile client costs a
connection, never a function thread. Around that:

- pipelined requests are answered in order, one call at a time; reading
  pauses while one waits behind a call, and a malformed request behind
  valid ones is answered (``400`` and close) only after their answers;
- ``Expect: 100-continue`` is answered when the edge starts waiting for the
  body, unless the body is past ``SERVER_MAX_BODY_SIZE`` (then the call is
  answered at once, normally with the body-limit layer's ``413``, and the
  connection ends);
- the answer is framed here: its ``Content-Length`` when the body came
  whole, chunked when it is streamed (close-delimited on HTTP/1.0), no
  body for ``HEAD``, ``204`` and ``304`` (a ``1xx``, a field name that is
  no token or a ``Content-Length`` that is no ``1*DIGIT`` never gets here:
  :func:`~.calls.check_head` made them the function's ``500``). A body
  longer than the function's own ``Content-Length`` is cut at that length
  (a warning logged once for the answer), as stock gunicorn does; one
  shorter closes the connection after it. Two ``Content-Length`` fields
  that differ make the function's ``500`` here; an ``Upgrade`` field of
  the function's is dropped (the edge upgrades nothing of its own, and
  sends no ``Connection: upgrade``: RFC 9110 section 7.8);
- a client that closes its connection, or its sending side, is gone for
  its calls (``client_connected()`` says so; one still waiting for a thread
  is dropped), and the answer in progress still goes out on a half-closed
  connection.
"""

from __future__ import annotations

import asyncio
import fcntl
import io
import logging
import struct
import tempfile
import termios
from collections import deque
from collections.abc import Callable, Iterable
from time import monotonic
from typing import IO, TYPE_CHECKING

import httptools

from funcwsgi.middleware.server_errors import INTERNAL_ERROR
from funcwsgi.replies import HEAD_TOO_LARGE, REQUEST_TIMEOUT, Reply

from ..specs import HEAD_LIMIT
from .bounds import FRAMING_NAMES, GOOD_HOSTS, MALFORMED, NO_BODY, PREFACE, ChunkSizes, Refused, asks_close, check_trailer, framing, target_refused
from .calls import NO_ADDRESS, address_fields
from .connections import ACCEPTED, BODY, CALLED, HEAD, HELD, IDLE
from .dates import DATE

if TYPE_CHECKING:
    from .calls import Answer, Headers
    from .edge import Edge

log = logging.getLogger("funcwsgi")

#: What the fields bounds.framing() reads have shown of a head so far (Http1Connection.framing_seen).
NO_FRAMING = 0
ONE_HOST = 1  # one Host found valid before (bounds.GOOD_HOSTS), and nothing else: nothing to read again (most requests)
FRAMED = 2  # more Hosts, a new one, the body's framing or Expect: framing() reads the fields
#: llhttp's method names as llhttp hands them over, for the common ones.
METHOD_NAMES = {name.encode(): name for name in ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")}
SLASH = ord("/")
#: Body bytes kept in memory per request; beyond this the body goes to a temporary file.
BODY_IN_MEMORY = 256 * 1024
CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"
#: Response fields the edge writes itself, from what it knows of the connection and the answer; a function's
#: Upgrade is dropped with them (meaningless without ``Connection: upgrade``, which only a 101 carries).
OWN_FIELDS = frozenset({"connection", "transfer-encoding", "keep-alive", "upgrade"})
BODILESS_CODES = frozenset({204, 304})
BODILESS_STATUSES = frozenset({"204", "304"})
#: Answer statuses found to have a body (not 1xx, 204 or 304), as functions spell them: one set lookup for most answers.
BODIED_STATUSES: set[str] = set()
# What an answer's field is to the edge, by its name (field_kind).
PLAIN = 0  # copied as it is
LENGTH = 1  # Content-Length
OWN = 2  # one the edge writes itself, or Date: the head is made field by field
#: Answer field names found plain, as functions spell them: most answers' fields are copied after one set lookup.
PLAIN_NAMES: set[str] = set()
#: Names (and statuses) that vary from answer to answer are not kept past this: they are looked at each time.
PLAIN_NAMES_LIMIT = 1024


def field_kind(name: str) -> int:
    """:data:`PLAIN`, :data:`LENGTH` or :data:`OWN`; a plain name is remembered in :data:`PLAIN_NAMES`."""
    lower = name.lower()
    if lower == "content-length":
        return LENGTH
    if lower in OWN_FIELDS or lower == "date":
        return OWN
    if len(PLAIN_NAMES) < PLAIN_NAMES_LIMIT:
        PLAIN_NAMES.add(name)
    return PLAIN


class AnswerRefused(Exception):
    """The function's answer has a head HTTP does not allow (:meth:`Http1Exchange.head`): its 500 goes out instead."""


def overran(exchange: Http1Exchange) -> None:
    log.warning(
        "The function wrote more than its Content-Length (%d bytes) on %s %s: the rest was not sent",
        exchange.length,
        exchange.method,
        exchange.target[:200].decode("latin-1"),
    )


def bodied(status: str) -> bool:
    """Whether an answer of ``status`` has a body by HTTP's rules; a status that has one is remembered in :data:`BODIED_STATUSES`."""
    code = status[:3]
    if code < "200" or code in BODILESS_STATUSES:
        return False
    if len(BODIED_STATUSES) < PLAIN_NAMES_LIMIT:
        BODIED_STATUSES.add(status)
    return True


class SpooledBody:
    """A request body as it arrives: in memory, then past BODY_IN_MEMORY in a temporary file (HTTP/1.1 and HTTP/2 alike)."""

    __slots__ = ("memory", "spool", "received")
    memory: bytearray | None  # None until a body byte comes: most requests have none
    spool: IO[bytes] | None
    received: int

    def store(self, data: bytes) -> None:
        self.received += len(data)
        if self.spool is not None:
            self.spool.write(data)
            return
        memory = self.memory
        if memory is None:
            memory = self.memory = bytearray(data)
        else:
            memory += data
        if len(memory) > BODY_IN_MEMORY:
            self.spool = tempfile.TemporaryFile()
            self.spool.write(memory)
            self.memory = None

    def body(self) -> IO[bytes]:
        if self.spool is not None:
            self.spool.seek(0)
            return self.spool
        return io.BytesIO(self.memory or b"")


class Http1Exchange(SpooledBody):
    """One request on an HTTP/1.1 connection, and its answer (:class:`~.calls.Exchange`)."""

    __slots__ = (
        "conn",
        "method",
        "target",
        "http_version",
        "headers",
        "peer",
        "address",
        "client_gone",
        "body_skipped",
        "keep_alive",
        "continue_wanted",
        "head_sent",
        "chunked_out",
        "bodiless",
        "length",
        "sent",
        "overran",
        "ended",
        "aborted",
    )
    # Set by head() for the answer: its Content-Length as found or made (None: chunked or close-delimited), ...
    length: int | None
    chunked_out: bool
    bodiless: bool
    sent: int  # body bytes written, within the length
    overran: bool  # the function wrote past the length (logged once)

    def __init__(self, conn: Http1Connection, method: str, target: bytes, version: str, headers: list[tuple[bytes, bytes]], keep_alive: bool) -> None:
        self.conn = conn
        self.method = method
        self.target = target
        self.http_version = version
        self.headers = headers
        self.peer = conn.peer
        self.address = conn.address
        self.client_gone = False
        self.body_skipped = False
        self.keep_alive = keep_alive
        self.memory = None
        self.spool: IO[bytes] | None = None
        self.received = 0
        self.continue_wanted = False
        self.head_sent = False
        # chunked_out, bodiless, length, sent and overran are set by head(), before piece() reads them:
        # whole(), the usual way, ends the answer without them.
        self.ended = False
        self.aborted = False

    def respond(self, status: str, headers: Headers, chunks: Iterable[bytes], end: bool) -> None:
        """A piece of the answer, or all of it (``end``) in one write: most answers go whole, and are made here in one pass.

        A field whose name :func:`field_kind` found plain before is copied as it is; an answer with a field the edge
        writes itself, a Date, a second length, no body by HTTP's rules or on HTTP/1.0 has its head made by :meth:`head`.
        """
        conn = self.conn
        transport = conn.transport
        if self.aborted or self.ended or conn.closed or transport is None:
            return
        if end and not self.head_sent and self.method != "HEAD" and self.http_version == "1.1" and (status in BODIED_STATUSES or bodied(status)):
            body = b"".join(chunks)
            lines = ["HTTP/1.1 ", status, "\r\n"]
            length = -1
            for name, value in headers:
                if name not in PLAIN_NAMES:
                    kind = LENGTH if name == "Content-Length" else field_kind(name)
                    if kind == LENGTH and length < 0:
                        try:
                            length = int(value)
                        except ValueError:
                            break  # where such a field is left out
                    elif kind != PLAIN:
                        break  # one the edge writes itself, Date, a second length
                lines += (name, ": ", value, "\r\n")
            else:
                if length < 0:
                    length = len(body)
                    lines += ("Content-Length: ", str(length), "\r\n")
                if not self.keep_alive or conn.stopping or conn.client_gone:
                    self.keep_alive = False
                    lines.append("Connection: close\r\n")
                if length != len(body):
                    if len(body) > length:  # never more than the length said (RFC 9112 section 6.3): the framing holds
                        self.length = length
                        overran(self)
                        body = body[:length]
                    else:
                        self.keep_alive = False  # a body short of its length: the connection cannot go on
                self.head_sent = self.ended = True
                lines += ("Date: ", DATE.text, "\r\n\r\n")  # current to the second: DateField.keep()
                transport.write("".join(lines).encode("latin-1") + body)
                if transport.get_write_buffer_size():
                    conn.connections.wrote(conn)
                return
            chunks = (body,)
        transport.write(self.piece(status, headers, chunks, end))
        if transport.get_write_buffer_size():
            conn.connections.wrote(conn)

    def piece(self, status: str, headers: Headers, chunks: Iterable[bytes], end: bool) -> bytes:
        """What goes out for a piece of an answer (the head first, the first time), field by field."""
        parts: list[bytes] = []
        if not self.head_sent:
            try:
                parts.append(self.head(status, headers, chunks, end))
            except AnswerRefused as refused:
                return self.refused_answer(str(refused))
        if not self.bodiless:
            if self.chunked_out:
                for chunk in chunks:
                    if chunk:
                        parts += (b"%x\r\n" % len(chunk), chunk, b"\r\n")
                if end:
                    parts.append(b"0\r\n\r\n")
            else:
                length = self.length
                for chunk in chunks:
                    if length is not None and self.sent + len(chunk) > length:
                        # Never more than the length said (RFC 9112 section 6.3): the rest is dropped, the framing holds.
                        if not self.overran:
                            self.overran = True
                            overran(self)
                        chunk = chunk[: length - self.sent]
                    self.sent += len(chunk)
                    parts.append(chunk)
        if end:
            self.ended = True
            if self.length is not None and self.sent != self.length and not self.bodiless:
                self.keep_alive = False  # the body did not say what its length said: the connection cannot go on
        return b"".join(parts)

    def refused_answer(self, reason: str) -> bytes:
        """The function's head cannot go out (``reason``): its 500 in its place, and nothing more of the answer."""
        log.error("The function's answer to %s %s cannot go out: %s; answered 500", self.method, self.target[:200].decode("latin-1"), reason)
        self.head_sent = False
        head = self.head(INTERNAL_ERROR.status, list(INTERNAL_ERROR.headers), (INTERNAL_ERROR.body,), True)
        self.ended = True  # what the call sends later is dropped
        return head if self.bodiless else head + INTERNAL_ERROR.body

    def head(self, status: str, headers: Headers, chunks: Iterable[bytes], end: bool) -> bytes:
        self.head_sent = True
        self.chunked_out = self.bodiless = self.overran = False
        self.sent = 0
        conn = self.conn
        code = int(status[:3])
        close = not self.keep_alive or conn.stopping or conn.client_gone
        lines = ["HTTP/1.1 ", status, "\r\n"]
        length: int | None = None
        dated = False
        for name, value in headers:
            lower = name.lower()
            if lower in OWN_FIELDS:
                if lower == "connection" and "close" in value.lower():
                    close = True
                continue
            if lower == "content-length":
                try:
                    declared = int(value)  # 1*DIGIT: calls.check_head refused any other
                except ValueError:
                    continue
                if length is not None:
                    if declared != length:
                        raise AnswerRefused(f"its Content-Length fields differ ({length} and {declared})")
                    continue  # the same length twice: said once
                length = declared
            elif lower == "date":
                dated = True  # the function's own: Date is one field (RFC 9110 section 6.6.1)
            lines += (name, ": ", value, "\r\n")
        if self.method == "HEAD" or code in BODILESS_CODES or code < 200:
            self.bodiless = True
        elif length is None:
            if end:
                chunks = chunks if isinstance(chunks, (list, tuple)) else list(chunks)
                length = sum(len(chunk) for chunk in chunks)
                lines += ("Content-Length: ", str(length), "\r\n")
            elif self.http_version == "1.1":
                self.chunked_out = True
                lines.append("Transfer-Encoding: chunked\r\n")
            else:
                close = True  # HTTP/1.0: the body ends with the connection
        self.length = length
        if close:
            self.keep_alive = False
            lines.append("Connection: close\r\n")
        elif self.http_version == "1.0":
            lines.append("Connection: keep-alive\r\n")
        lines += ("\r\n",) if dated else ("Date: ", DATE.current(), "\r\n\r\n")
        return "".join(lines).encode("latin-1")

    def pending(self) -> int:
        return self.conn.unsent()

    def on_drained(self, callback: Callable[[], None]) -> None:
        self.conn.on_drained(callback)

    def abort(self, answer: Answer | None) -> None:
        self.conn.abort(self, answer)

    def finished(self) -> None:
        """The call is over: the connection's next request is called, or it waits for one, or it closes."""
        conn = self.conn
        if self is not conn.active:
            return
        conn.active = None
        if conn.closed or self.aborted:
            return
        if not self.ended or not self.keep_alive or conn.stopping:
            conn.close()
            return
        queue = conn.queue
        if queue:
            following = queue.popleft()
            if not queue and not conn.ignoring:
                conn.resume_reading()
            conn.ready(following, next_in_line=True)
            return
        if conn.refusal is not None:
            conn.send_refusal(conn.refusal)
            return
        if conn.client_gone:
            conn.close()
            return
        if conn.read_paused:
            conn.resume_reading()
        if conn.reading is None and not conn.in_head:  # the usual way: the client has sent nothing more yet
            # Connections.wait(conn, IDLE, keepalive), inlined: every answer on a kept-alive connection passes here.
            now = monotonic()
            conn.phase, conn.deadline, conn.progress = IDLE, now + conn.timeouts.keepalive, now
            try:
                conn.connections.waiting.move_to_end(conn)
            except KeyError:  # as Connections.wait
                conn.connections.waiting[conn] = None
        else:
            conn.await_client(fresh=True)

    async def disconnected(self) -> None:
        await self.conn.gone()

    def close(self) -> None:
        if self.spool is not None:
            self.spool.close()
            self.spool = None

    #: A request without a body (most): its call's environ makes the empty stream itself, with no Python frame of ours.
    body = staticmethod(io.BytesIO)


class Http1BodyExchange(Http1Exchange):
    """An exchange whose request has a body (on_headers_complete tells which it makes): read where it was stored."""

    __slots__ = ()
    body = SpooledBody.body  # type: ignore[assignment]  # both are called with no argument, for a stream of the body

    def finished(self) -> None:
        if self is self.conn.active:
            self.close()  # its temporary file, if the body went to one
        super().finished()


class Http1Connection(asyncio.Protocol):
    """One client connection: requests read with llhttp, answered in order."""

    def __init__(self, edge: Edge) -> None:
        self.edge = edge
        self.connections = edge.connections
        self.runner = edge.runner
        self.limits = edge.limits
        self.bounds = edge.head_bounds
        self.timeouts = edge.timeouts
        self.parser = httptools.HttpRequestParser(self)
        self.transport: asyncio.Transport | None = None
        self.peer: tuple[str, int] | None = None
        self.server: tuple[str, int] | None = None
        #: The environ's address entries of its calls (calls.address_fields), made when it opens.
        self.address = NO_ADDRESS
        # for the sweep (connections.py)
        self.phase = ACCEPTED
        self.deadline = 0.0
        self.progress = 0.0
        # the request being read
        self.in_head = False  # a head is being read
        self.head_size = 0  # its bytes as llhttp handed them over: the target's, each field's
        self.head_bytes = 0  # bytes fed while a head was incomplete
        self.target = b""  # as llhttp hands it over, in one part or more
        self.fields: list[tuple[bytes, bytes]] = []
        self.framing_seen = NO_FRAMING  # what of the fields bounds.framing() reads the head has shown so far
        self.good_host = b""  # the Host its last request named, found valid (bounds.GOOD_HOSTS)
        # Where the head being read began, so its HTTP version is read from its bytes (on_headers_complete).
        self.feeding = b""  # what llhttp is being fed
        self.fresh_piece = False  # no request ended in it yet: a request that begins in it begins at its first byte
        self.line_at_start = False  # the head being read began at the first byte of what llhttp is being fed
        self.reading: Http1Exchange | None = None  # its head is complete, its body is not
        self.chunk_sizes: ChunkSizes | None = None
        # the requests read
        self.active: Http1Exchange | None = None  # whose call runs, or whose answer goes out
        self.queue: deque[Http1Exchange] = deque()  # complete, behind the active one
        self.refusal: Reply | None = None  # answered once the requests before it are, then the connection ends
        self.ignoring = False  # what the client sends next is not read (after a refusal, a close, a skipped body)
        self.read_paused = False
        self.write_paused = False
        self.drained: list[Callable[[], None]] = []
        self.gone_future: asyncio.Future[None] | None = None
        self.client_gone = False
        self.closed = False
        self.stopping = False
        self.early = b""  # what a held connection sent before it was let in
        self.opening = edge.http2_prior_knowledge  # the first bytes may be HTTP/2's preface
        self.upgrading: tuple[Http1Exchange, bytes] | None = None  # an Upgrade: h2c request, and its HTTP2-Settings
        #: An Upgrade request the edge does not take, whose body llhttp skipped, and a head that frames that body (feed).
        self.behind_upgrade: tuple[Http1Exchange, bytes] | None = None
        self.continued: Http1Exchange | None = None  # its body is read behind that head

    # -- the connection ------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # Not asserted to be an asyncio.Transport: uvloop's transports are not its subclasses.
        self.transport = transport  # type: ignore[assignment]
        transport.set_write_buffer_limits(high=self.edge.outbox_limit)  # type: ignore[attr-defined]
        peer = transport.get_extra_info("peername")
        if isinstance(peer, tuple):
            self.peer = (str(peer[0]), int(peer[1]))
        server = transport.get_extra_info("sockname")
        if isinstance(server, tuple):
            self.server = (str(server[0]), int(server[1]))
        self.address = address_fields(self.server, self.peer)
        self.edge.opened(self)
        self.connections.arrived(self)  # False: held, its bytes kept unparsed until it is let in

    def hand_over(self) -> None:
        """HTTP/2 (http2.py) took the transport: nothing more is done here for this connection."""
        self.closed = True
        self.ignoring = True
        self.detach()

    def let_in(self) -> None:
        self.resume_reading()
        early, self.early = self.early, b""
        if early:
            self.data_received(early)

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.mark_gone()
        self.connections.closed(self)
        self.edge.closed(self)
        for exchange in (self.reading, *self.queue):
            if exchange is not None:
                exchange.close()
        self.queue.clear()
        self.reading = None
        self.wake_drained()
        self.detach()

    def detach(self) -> None:
        """Let go of llhttp and the transport, once closed: the connection is then freed as its last call ends.

        Each holds this object (llhttp its callbacks, the transport its
        protocol), so a connection that kept them would be a reference cycle,
        freed only by the cyclic GC: under a flood of short connections that
        garbage piles up (memory) and one collection frees thousands at once
        (a pause of the whole loop). Nothing reads either once the connection
        is closed or handed over.
        """
        del self.parser
        self.transport = None

    def eof_received(self) -> bool:
        # A client that shut its sending side is gone for its calls (nginx counts it so: its 499);
        # an answer in progress still goes out on the half-closed connection.
        self.mark_gone()
        if self.active is None and not self.queue:
            return False  # nothing to answer: the transport closes
        self.ignoring = True
        return True

    def mark_gone(self) -> None:
        if self.client_gone:
            return
        self.client_gone = True
        for exchange in (self.active, *self.queue):
            if exchange is not None:
                exchange.client_gone = True
        if self.gone_future is not None and not self.gone_future.done():
            self.gone_future.set_result(None)

    async def gone(self) -> None:
        if self.client_gone:
            return
        if self.gone_future is None:
            self.gone_future = asyncio.get_running_loop().create_future()
        await self.gone_future

    def pause_reading(self) -> None:
        if not self.read_paused and self.transport is not None:
            self.read_paused = True
            self.transport.pause_reading()

    def resume_reading(self) -> None:
        if self.read_paused and self.transport is not None and not self.closed:
            self.read_paused = False
            self.transport.resume_reading()

    def pause_writing(self) -> None:
        self.write_paused = True

    def resume_writing(self) -> None:
        self.write_paused = False
        self.wake_drained()

    def wake_drained(self) -> None:
        drained, self.drained = self.drained, []
        for callback in drained:
            callback()

    def on_drained(self, callback: Callable[[], None]) -> None:
        if self.write_paused and not self.closed:
            self.drained.append(callback)
        else:
            callback()

    def unsent(self) -> int:
        transport = self.transport
        return 0 if transport is None or self.closed else transport.get_write_buffer_size()

    # -- reading ---------------------------------------------------------------------------

    def data_received(self, data: bytes) -> None:
        if self.phase == HELD:
            if not self.early:
                self.connections.asking(self)
            self.early += data
            if len(self.early) > HEAD_LIMIT:
                self.pause_reading()
            return
        if self.ignoring:
            return
        if self.opening:
            data = self.after_opening(data)
            if not data:
                return
        self.progress = monotonic()
        if self.in_head:
            self.head_bytes += len(data)
            if self.head_bytes > HEAD_LIMIT + 65536:  # far past the limit and still no end: not worth parsing
                self.refuse(HEAD_TOO_LARGE)
                return
        # llhttp is fed a head at a time, and a chunked body line by line (bounds.ChunkSizes reads its size lines).
        parser = self.parser
        try:
            while data:
                if self.chunk_sizes is not None:
                    data = self.feed_chunked(data)
                    continue
                # Cut where a head may end (llhttp then knows whether a chunked body follows). No cut when the
                # read holds at most one head's end, at its end: one piece (the usual read). partition(), not find():
                # find() parses its arguments with PyArg_ParseTuple (about 260 instructions).
                head, end, rest = data.partition(b"\r\n\r\n")
                if rest:
                    piece, data = head + end, rest
                else:
                    piece, data = data, b""
                self.feeding = piece
                self.fresh_piece = True
                self.line_at_start = False
                try:
                    parser.feed_data(piece)
                except httptools.HttpParserUpgrade as upgrade:
                    data = self.upgraded(piece[upgrade.args[0] :] + data)
        except httptools.HttpParserCallbackError as error:
            # Not kept in a local of this frame: its traceback holds this frame, a cycle only the cyclic GC frees.
            self.callback_failed(error.__context__)
            return
        except httptools.HttpParserError:
            self.refuse(MALFORMED)
            return
        self.feeding = b""
        if self.in_head and self.head_bytes > HEAD_LIMIT:
            self.refuse(HEAD_TOO_LARGE)
            return
        if self.active is None and not self.closed:
            self.await_client(fresh=False)

    def callback_failed(self, failure: BaseException | None) -> None:
        """One of llhttp's callbacks raised: a refused request is answered its reply, anything else 400 (and logged)."""
        self.refuse(failure.reply if isinstance(failure, Refused) else MALFORMED)
        if not isinstance(failure, Refused):
            log.exception("The edge failed reading a request", exc_info=failure)

    def upgraded(self, data: bytes) -> bytes:
        """llhttp stopped after an Upgrade request's head; ``data`` is what follows it. What is left to feed is returned."""
        if self.upgrading is not None:
            # An Upgrade: h2c request: HTTP/2 takes the connection, body and all.
            (exchange, settings), self.upgrading = self.upgrading, None
            self.behind_upgrade = None
            self.edge.http2_upgrade.upgrade(self, exchange, settings, data)
            return b""
        # Any other Upgrade is ignored (RFC 9110 section 7.8): the connection stays HTTP/1.1. llhttp
        # skipped the request's body and stopped; a head framing that body as the request's did
        # lets llhttp read it for the request (on_headers_complete), and what follows as usual.
        if self.ignoring:
            return b""
        if self.behind_upgrade is not None:
            (self.continued, head), self.behind_upgrade = self.behind_upgrade, None
            self.parser.feed_data(head)
        return data

    def feed_chunked(self, data: bytes) -> bytes:
        """Line by line until the chunked body ends; what follows it is returned."""
        pieces = ChunkSizes.pieces(data)
        for index, piece in enumerate(pieces):
            sizes = self.chunk_sizes
            if sizes is None:  # the body ended
                return b"".join(pieces[index:])
            sizes.fed(piece)
            self.parser.feed_data(piece)
        return b""

    def after_opening(self, data: bytes) -> bytes:
        """The first bytes of a connection that may speak HTTP/2: held until they tell."""
        opening = self.early + data
        if PREFACE.startswith(opening):
            self.early = opening
            return b""
        self.early = b""
        self.opening = False
        if opening.startswith(PREFACE) and self.edge.http2 is not None and self.transport is not None:
            self.phase = CALLED  # HTTP/2 takes the connection: no HTTP/1.1 read deadline
            self.edge.http2(self, opening)
            return b""
        return opening

    # llhttp's callbacks (httptools calls them by name)

    def on_message_begin(self) -> None:
        self.in_head = True
        self.head_bytes = 0
        self.line_at_start = self.fresh_piece
        phase = self.phase
        if phase == IDLE:
            # A kept-alive connection's next request: its head has its own deadline, from its first byte (just read).
            # It keeps its place among the waiting (connections.py): it has waited on its client since its last answer.
            self.phase = HEAD
            self.deadline = self.progress + self.timeouts.header
        elif phase == ACCEPTED:
            self.phase = HEAD  # the head's deadline runs from the accept

    def on_url(self, part: bytes) -> None:
        # Bytes joined as they come: one part, most often (then no copy); at most HeadBounds.target bytes.
        target = self.target = self.target + part
        size = self.head_size = len(target)
        if size > self.bounds.target:
            raise target_refused(self.limits, size)

    def on_header(self, name: bytes, value: bytes) -> None:
        if not self.in_head:  # a trailer
            check_trailer(name.lower())
            return
        size = len(name) + len(value)
        total = self.head_size = self.head_size + size + 4
        fields = self.fields
        name = name.lower()
        value = value.strip(b" \t")
        fields.append((name, value))
        if name in FRAMING_NAMES:
            if name == b"host" and self.framing_seen == NO_FRAMING and (value == self.good_host or value in GOOD_HOSTS):
                self.good_host = value  # its connection's next requests name it again (most): one comparison, no hash
                self.framing_seen = ONE_HOST
            else:
                self.framing_seen = FRAMED  # a second Host, one not seen valid yet, or the body's framing: framing() reads the fields
        bounds = self.bounds
        if size > bounds.field or total > HEAD_LIMIT or len(fields) > bounds.fields:
            raise Refused(HEAD_TOO_LARGE)

    def on_headers_complete(self) -> None:
        parser = self.parser
        fields = self.fields
        target = self.target
        # One Host and no field framing() reads (most requests): nothing to read again.
        framed = self.framing_seen != ONE_HOST
        self.framing_seen = NO_FRAMING
        self.fields = []
        self.target = b""
        self.in_head = False
        if self.continued is not None:  # the head feed() made for a body skipped behind an Upgrade
            self.reading, self.continued = self.continued, None
            if (b"transfer-encoding", b"chunked") in fields:
                self.chunk_sizes = ChunkSizes(self.bounds.body, self.edge.body_too_large)
            return
        raw_method = parser.get_method()
        at = len(raw_method) + 1 + len(target)
        if self.line_at_start and self.feeding[at : at + 11] == b" HTTP/1.1\r\n":
            # The request line, read in what llhttp was fed: httptools formats the version with str.format, ~2,600
            # instructions. A slice, not startswith(): that parses its arguments with PyArg_ParseTuple (~250 more).
            version = "1.1"
        else:
            version = parser.get_http_version()
        length, chunked, expect = framing(version, fields) if framed else NO_BODY
        try:
            method = METHOD_NAMES[raw_method]  # the common ones: no str made
        except KeyError:
            method = raw_method.decode()  # llhttp's method names are ASCII: UTF-8, the default, without naming a codec
        if target[0] != SLASH:  # an int, no slice made
            target = self.origin_form(target, method)
        keep_alive = parser.should_keep_alive()
        if keep_alive and version == "1.0" and asks_close(fields):
            keep_alive = False  # llhttp lets "keep-alive" win over "close" on HTTP/1.0: close wins (RFC 9112 section 9.6)
        exchange = (Http1BodyExchange if length or chunked else Http1Exchange)(self, method, target, version, fields, keep_alive)
        self.reading = exchange
        if not (length or chunked):
            return  # no body (most requests): nothing more to frame
        limit = self.bounds.body
        if limit and length > limit:
            # Not waited for: the call is answered now (the body-limit layer's 413), and the connection ends.
            exchange.body_skipped = True
            exchange.keep_alive = False
            self.ignoring = True
            self.reading = None
            self.ready(exchange)
            return
        if (length or chunked) and parser.should_upgrade():
            # httptools has llhttp skip an Upgrade request's body; unless HTTP/2 takes it, it is read behind this head.
            body_framing = b"Transfer-Encoding: chunked" if chunked else b"Content-Length: %d" % length
            self.behind_upgrade = (exchange, b"POST / HTTP/1.1\r\n" + body_framing + b"\r\n\r\n")
        elif chunked:
            self.chunk_sizes = ChunkSizes(limit, self.edge.body_too_large)
        if expect and (length or chunked):
            if self.active is None:
                self.send_raw(CONTINUE)
            else:
                exchange.continue_wanted = True

    def on_body(self, data: bytes) -> None:
        exchange = self.reading
        if exchange is None:  # a skipped body
            return
        exchange.store(data)

    def on_chunk_header(self) -> None:
        exchange = self.reading
        if self.chunk_sizes is not None and exchange is not None:
            self.chunk_sizes.check(exchange.received)

    def on_message_complete(self) -> None:
        exchange = self.reading
        self.reading = None
        self.chunk_sizes = None
        self.fresh_piece = False  # a request that begins next, in what llhttp is being fed, begins after this one
        if exchange is None:  # its call was started at its head (a skipped body)
            return
        h2c = self.edge.http2_upgrade
        if h2c is not None and self.parser.should_upgrade() and self.active is None and not self.queue:
            settings = h2c.wanted(self, exchange)
            if settings is not None:
                self.upgrading = (exchange, settings)  # handed to HTTP/2 once llhttp stops (feed)
                return
        if self.behind_upgrade is not None:
            return  # its body has yet to be read (feed)
        if not exchange.keep_alive:
            self.ignoring = True  # the client said it sends nothing more
        if self.active is None and not self.queue:  # ready(exchange), inlined: a call from here starts every call
            self.active = exchange
            if self.client_gone:
                exchange.client_gone = True
            self.phase = CALLED
            self.runner.start(exchange)
        else:
            self.ready(exchange)

    @staticmethod
    def origin_form(target: bytes, method: str) -> bytes:
        """The path of an absolute-form target (RFC 9112 section 3.2.2); ``*`` for OPTIONS; else 400."""
        if target == b"*" and method == "OPTIONS":
            return target
        scheme, separator, rest = target.partition(b"://")
        if separator and scheme.lower() in (b"http", b"https"):
            slash = rest.find(b"/")
            query = rest.find(b"?")
            if slash < 0 or (0 <= query < slash):
                return b"/" + rest[query:] if query >= 0 else b"/"
            return rest[slash:]
        raise Refused(MALFORMED)

    # -- calls -----------------------------------------------------------------------------

    def ready(self, exchange: Http1Exchange, next_in_line: bool = False) -> None:
        """A complete request: its call starts now, or once the calls before it have ended (``next_in_line``: they have)."""
        if not next_in_line and (self.active is not None or self.queue):
            self.queue.append(exchange)
            self.pause_reading()  # pipelined: one request waits at most, with what came with it
            return
        self.active = exchange
        if self.client_gone:
            exchange.client_gone = True
        self.phase = CALLED  # no read deadline while the call runs (connections.py): it keeps its place among the waiting
        self.runner.start(exchange)

    def await_client(self, fresh: bool) -> None:
        """No call runs: the deadline is the client's, by where its next request is."""
        timeouts = self.timeouts
        reading = self.reading
        if reading is not None:  # the head came, the body has not: a pause, from now
            if reading.continue_wanted:
                reading.continue_wanted = False
                self.send_raw(CONTINUE)
            self.connections.wait(self, BODY, timeouts.body)
        elif self.in_head:
            if fresh or self.phase == CALLED:  # a pipelined head began during the call
                self.connections.wait(self, HEAD, timeouts.header)
        elif fresh or self.phase == CALLED:
            self.connections.wait(self, IDLE, timeouts.keepalive)

    # -- refusing, timing out, closing -------------------------------------------------------

    def refuse(self, reply: Reply) -> None:
        """The request being read is refused: answered after the ones before it, then the connection ends."""
        self.ignoring = True
        self.reading = None
        self.in_head = False
        self.chunk_sizes = None
        if self.active is None and not self.queue:
            self.send_refusal(reply)
        elif self.refusal is None:
            self.refusal = reply

    def send_refusal(self, reply: Reply) -> None:
        self.send_raw(reply.closing_wire())
        self.close()

    def timed_out(self) -> None:
        # A 408 for a request begun; an idle connection is closed quietly, since a 408 there could be
        # read as the answer to the request the client is about to send.
        if self.phase in (HEAD, BODY) and self.active is None:
            self.send_refusal(REQUEST_TIMEOUT)
        else:
            self.close()

    def evict(self) -> None:
        self.close()

    def unread(self) -> int:
        """Bytes the client sent that the loop has not read yet (the kernel's count)."""
        return 0 if self.transport is None or self.closed else unread_bytes(self.transport)

    def send_stalled(self) -> None:
        if self.transport is not None:
            self.transport.abort()

    def stop(self, *, close_idle: bool = True) -> None:
        """The worker stops: an idle connection closes now (or, not ``close_idle``, when asked again);
        one with a call, or a request arriving, after its answer."""
        self.stopping = True
        if close_idle and self.active is None and self.reading is None and not self.in_head and not self.unread():
            self.close()

    def close(self) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.close()

    def send_raw(self, data: bytes) -> None:
        if self.transport is not None and not self.closed:
            self.transport.write(data)

    # -- answering ---------------------------------------------------------------------------

    def abort(self, exchange: Http1Exchange, answer: Answer | None) -> None:
        """End ``exchange`` now (the watchdog's 408, a failure, a function's exit): ``answer`` if no head went out, then close."""
        if exchange.aborted or self.closed:
            return
        if exchange.ended:
            return  # the function's own answer went out first
        exchange.aborted = True
        if answer is not None and not exchange.head_sent and self.transport is not None:
            status, headers, body = answer
            exchange.keep_alive = False
            exchange.head_sent = False
            self.transport.write(exchange.head(status, headers, (body,), True) + (b"" if exchange.bodiless else body))
        self.close()


def unread_bytes(transport: asyncio.BaseTransport) -> int:
    """Bytes the client sent that the loop has not read yet (the kernel's count), on any protocol's transport."""
    try:
        sock = transport.get_extra_info("socket")
        count: int = struct.unpack("i", fcntl.ioctl(sock.fileno(), termios.FIONREAD, b"\0\0\0\0"))[0]
    except (OSError, AttributeError, ValueError):
        return 0
    return count

