"""HTTP/2 without TLS (h2c) on the edge: the ``h2`` library frames it; each stream is one call.

A connection becomes HTTP/2 in one of two ways, on the port HTTP/1.1 is
served on (:mod:`.http1` hands it over):

- it opens with the connection preface (prior knowledge, RFC 9113 section
  3.3), as Knative's queue-proxy and mesh sidecars speak it;
- its first request asks ``Upgrade: h2c`` with one ``HTTP2-Settings``
  (RFC 7540 section 3.2): ``101``, and that request is stream 1.

Only peers in gunicorn's ``forwarded_allow_ips`` get HTTP/2, as with
gunicorn's own h2c: others are served HTTP/1.1 (a preface gets ``400``).

Every stream is an :class:`Http2Stream`, the :class:`~.calls.Exchange` the
call runner runs like an HTTP/1.1 request, so streams of one connection run
at once, each on its own thread (or task). What a connection may cost is
bounded here:

- streams: ``SETTINGS_MAX_CONCURRENT_STREAMS`` is announced; a stream opened
  past it is refused alone, ``RST_STREAM REFUSED_STREAM`` (RFC 9113 section
  5.1.2), and the connection lives on;
- a malformed header section (connection-specific fields, invalid names or
  values, missing or misplaced pseudo-header fields, one in trailers) resets
  its stream with ``PROTOCOL_ERROR`` before any call; the header list
  (HPACK-decoded) is bounded like an HTTP/1.1 head, and a CONTINUATION or
  HPACK flood ends the connection;
- resets and control frames (PING, SETTINGS, empty DATA) past a burst end
  the connection with ``GOAWAY ENHANCE_YOUR_CALM`` (rapid reset,
  CVE-2023-44487; CVE-2019-9512/9515/9518);
- answers leave as the client's flow-control windows allow; a stream whose
  client takes nothing for ``SERVER_SEND_TIMEOUT`` is reset, and the bytes a
  connection holds back are bounded (:data:`CONNECTION_OUTBOX`); past them a
  streaming call waits (``pending()`` / ``on_drained()``);
- a stream reset by its client is its client leaving: ``client_gone``;
- the worker's stop refuses new streams, lets those in flight answer, then
  sends ``GOAWAY``.
"""

from __future__ import annotations

import asyncio
import ipaddress
import time
from collections import deque
from collections.abc import Callable, Iterable
from typing import IO, TYPE_CHECKING, Any

import h2.config
import h2.connection
import h2.events
import h2.exceptions
from h2.errors import ErrorCodes
from h2.settings import SettingCodes, Settings

from funcwsgi.replies import HEAD_TOO_LARGE, MALFORMED_REQUEST, REQUEST_TIMEOUT, URI_TOO_LONG, Reply

from ..specs import HEAD_LIMIT
from .calls import OUTBOX_LIMIT
from .connections import CALLED, IDLE
from .dates import DATE
from .http1 import BODILESS_CODES, SpooledBody, unread_bytes
from .http2_fields import UPGRADE_ONLY, Malformed, content_length, h2c_settings, request_section, trailer_section
from .http2_hpack import AnswerEncoder, EncodedFields, RequestDecoder, answer_fields, field_bytes, plain_field

if TYPE_CHECKING:
    from .calls import Answer, Headers
    from .edge import Edge
    from .http1 import Http1Connection, Http1Exchange

#: Request body a stream may send ahead of what the edge has read (its window), and a connection.
STREAM_WINDOW = 256 * 1024
CONNECTION_WINDOW = 1024 * 1024
#: Answer bytes a connection holds back for windows that are shut; past it, a streaming call waits.
CONNECTION_OUTBOX = OUTBOX_LIMIT
#: A waiting call goes on once its stream holds no more than this.
DRAINED = OUTBOX_LIMIT // 4
#: The smallest SETTINGS_MAX_FRAME_SIZE a peer may set (RFC 9113 section 6.5.2): an answer this long fits one DATA frame.
SMALLEST_FRAME = 16384
#: Bytes handed to the socket and not yet sent past which nothing more is framed, and nothing read.
WRITE_HIGH = 256 * 1024
#: Resets a client may send in RESET_SECONDS (gunicorn's figures): past them, GOAWAY ENHANCE_YOUR_CALM.
RESET_BURST = 200
RESET_SECONDS = 10.0
#: PING, SETTINGS and empty DATA frames a client may send in CONTROL_SECONDS (gunicorn's figures).
CONTROL_BURST = 1000
CONTROL_SECONDS = 10.0
#: How often a connection with streams looks for stalled ones.
CHECK_SECONDS = 0.25
SWITCHING = b"HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n"


class Burst:
    """Counts events over a sliding window: past ``limit`` of them within ``seconds``, a flood."""

    __slots__ = ("limit", "seconds", "times")

    def __init__(self, limit: int, seconds: float) -> None:
        self.limit = limit
        self.seconds = seconds
        self.times: deque[float] = deque()

    def past(self) -> bool:
        """One more event; whether the burst is now past its limit."""
        now = time.monotonic()
        times = self.times
        times.append(now)
        while now - times[0] > self.seconds:
            times.popleft()
        return len(times) > self.limit


class Http2Stream(SpooledBody):
    """One stream of an HTTP/2 connection: its request, and its answer (:class:`~.calls.Exchange`)."""

    __slots__ = (
        "conn",
        "id",
        "method",
        "target",
        "http_version",
        "headers",
        "length",
        "peer",
        "address",
        "client_gone",
        "body_skipped",
        "complete",
        "started",
        "call_done",
        "head_sent",
        "bodiless",
        "end_requested",
        "closed",
        "outbox",
        "held",
        "progress",
        "gone_future",
    )

    def __init__(
        self, conn: Http2Connection, stream_id: int, method: str, target: bytes, headers: list[tuple[bytes, bytes]], length: int | None
    ) -> None:
        self.conn = conn
        self.id = stream_id
        self.method = method
        self.target = target
        self.http_version = "2"
        self.headers = headers
        self.length = length  # its content-length, if it has one
        self.peer = conn.peer
        self.address = conn.address
        self.client_gone = False
        self.body_skipped = False
        self.memory = bytearray()
        self.spool: IO[bytes] | None = None
        self.received = 0
        self.complete = False  # the client ended its side: the request is whole
        self.started = False  # handed to the call runner
        self.call_done = False  # the runner is done with it (or it never reached the runner)
        self.head_sent = False
        self.bodiless = False
        self.end_requested = False  # the answer is complete as far as the runner is concerned
        self.closed = False  # our side is over: END_STREAM framed, or the stream reset
        self.outbox: deque[bytes] = deque()  # answer bytes the windows keep back
        self.held = 0
        self.progress = time.monotonic()
        self.gone_future: asyncio.Future[None] | None = None

    # -- the request ---------------------------------------------------------------------

    def gone(self) -> None:
        """The client reset the stream, or the connection ended: nobody will read the answer."""
        self.client_gone = True
        if self.gone_future is not None and not self.gone_future.done():
            self.gone_future.set_result(None)

    async def disconnected(self) -> None:
        if self.client_gone:
            return
        if self.gone_future is None:
            self.gone_future = asyncio.get_running_loop().create_future()
        await self.gone_future

    def release(self) -> None:
        if self.spool is not None:
            self.spool.close()
            self.spool = None

    # -- the answer (on the loop) ----------------------------------------------------------

    def respond(self, status: str, headers: Headers, chunks: Iterable[bytes], end: bool) -> None:
        self.conn.respond(self, status, headers, chunks, end)

    def pending(self) -> int:
        # Past the connection's bound, every stream that writes waits for it to drain, not only its own.
        held = self.conn.held
        return held if held > CONNECTION_OUTBOX else self.held

    def on_drained(self, callback: Callable[[], None]) -> None:
        if self.closed or self.pending() <= DRAINED:
            callback()
        else:
            self.conn.waiters.append((self, callback))

    def abort(self, answer: Answer | None) -> None:
        self.conn.abort(self, answer)

    def finished(self) -> None:
        self.conn.finished(self)


class Http2Connection(asyncio.Protocol):
    """One HTTP/2 connection, taken over from :class:`~.http1.Http1Connection` with its transport."""

    def __init__(self, entry: Http2Entry, handed: Http1Connection) -> None:
        self.entry = entry
        self.edge = edge = entry.edge
        self.runner = edge.runner
        self.connections = edge.connections
        self.h2 = h2.connection.H2Connection(entry.h2_config)
        # Announced as set; enforced here, stream by stream, rather than by h2 (which would end the connection).
        self.h2.local_settings = Settings(client=False, initial_values=entry.settings)
        self.h2.decoder = RequestDecoder(entry.header_list_size)
        self.h2.encoder = AnswerEncoder()
        self.transport: Any = handed.transport
        self.peer: tuple[str, int] | None = handed.peer
        self.server: tuple[str, int] | None = handed.server
        self.address = handed.address
        self.streams: dict[int, Http2Stream] = {}
        self.sending: dict[int, Http2Stream] = {}  # streams with answer bytes held back
        self.waiters: list[tuple[Http2Stream, Callable[[], None]]] = []
        self.held: int = 0
        self.write_paused = False
        self.read_paused = False
        self.stopping = False
        self.dead = False
        self.resets = Burst(RESET_BURST, RESET_SECONDS)
        self.controls = Burst(CONTROL_BURST, CONTROL_SECONDS)
        self.timer: asyncio.TimerHandle | None = None
        self.upgrading: Http1Exchange | None = None  # an Upgrade: h2c request whose body is still arriving
        self.upgrade_settings = b""
        self.early = b""
        # for the sweep (connections.py)
        self.phase = CALLED
        self.deadline = 0.0
        self.progress = time.monotonic()
        self.take_over(handed)

    def take_over(self, handed: Http1Connection) -> None:
        """This protocol reads the transport from now on, in the place the HTTP/1.1 one had."""
        handed.hand_over()
        self.edge.closed(handed)
        self.edge.opened(self)
        # The HTTP/1.1 protocol's place among the connections is this one's now: its own connection_lost
        # never comes, this one's tells Connections.closed.
        self.connections.replace(handed, self)
        self.transport.set_protocol(self)
        self.transport.set_write_buffer_limits(high=WRITE_HIGH)

    def begin(self) -> None:
        """Our SETTINGS, with the stream limit relaxed inside h2 (we enforce it), and a wider connection window."""
        settings = self.h2.local_settings
        settings[SettingCodes.MAX_CONCURRENT_STREAMS] = 2**31 - 1
        settings.acknowledge()
        self.h2.increment_flow_control_window(CONNECTION_WINDOW - 65535)
        self.write_out()
        self.connections.wait(self, IDLE, self.edge.timeouts.keepalive)

    # -- reading -----------------------------------------------------------------------------

    def data_received(self, data: bytes) -> None:
        if self.dead:
            return
        if self.upgrading is not None:
            self.early += data
            self.upgrade_body_arrived()
            return
        try:
            events = self.h2.receive_data(data)
        except h2.exceptions.ProtocolError:
            # A connection error (h2 queued its GOAWAY): a CONTINUATION or HPACK flood, a body longer or
            # shorter than its content-length, a frame out of place.
            self.end()
            return
        if not self.handle(events):
            return
        self.frame_all()

    def handle(self, events: list[h2.events.Event]) -> bool:
        """Each event's handler, in order; False once the connection ended on one of them."""
        handlers = HANDLERS
        for event in events:
            handler = handlers.get(type(event))
            if handler is not None:
                handler(self, event)
                if self.dead:
                    return False
        return True

    def request_received(self, event: h2.events.RequestReceived) -> None:
        stream_id = event.stream_id
        # The streams held here are those open or half-closed (RFC 9113 section 5.1.2), and a few whose
        # answer is framed but whose call is finishing: counted without h2's walk over all of its streams.
        if self.stopping or len(self.streams) >= self.entry.max_streams:
            self.h2.reset_stream(stream_id, ErrorCodes.REFUSED_STREAM)
            return
        try:
            method, target, headers, length = request_section(event.headers)
        except Malformed:
            self.h2.reset_stream(stream_id, ErrorCodes.PROTOCOL_ERROR)
            return
        stream = Http2Stream(self, stream_id, method, target, headers, length)
        self.add(stream)
        refusal = self.entry.refusal(stream, length)
        if refusal is not None:
            self.refuse(stream, refusal)
            return
        limit = self.entry.body_limit
        if limit and length is not None and length > limit:
            stream.body_skipped = True  # answered now (the body-limit layer's 413), its body not read
            self.entry.start_soon(stream)
            return
        if event.stream_ended is not None:
            stream.complete = True
            self.entry.start_soon(stream)

    def data(self, event: h2.events.DataReceived) -> None:
        length = event.flow_controlled_length
        stream = self.streams.get(event.stream_id)
        if length:
            try:
                self.h2.acknowledge_received_data(length, event.stream_id)
            except h2.exceptions.StreamClosedError:
                pass
        elif event.stream_ended is None:
            self.control()
        if stream is None or stream.body_skipped or stream.started:
            return
        stream.progress = time.monotonic()
        stream.store(event.data)
        limit = self.entry.body_limit
        if limit and stream.received > limit:
            self.refuse(stream, self.entry.body_too_large)
            return
        if event.stream_ended is not None:
            stream.complete = True
            self.entry.start_soon(stream)

    def trailers(self, event: h2.events.TrailersReceived) -> None:
        stream = self.streams.get(event.stream_id)
        if stream is None or stream.body_skipped or stream.started or stream.call_done:
            return  # answered, or to be, at its head (a refusal, a 413): its trailers change nothing
        try:
            refused = trailer_section(event.headers)
        except Malformed:
            self.reset(stream, ErrorCodes.PROTOCOL_ERROR)
            return
        if refused:
            self.refuse(stream, MALFORMED_REQUEST)
            return
        stream.complete = True
        self.entry.start_soon(stream)

    def stream_reset(self, event: h2.events.StreamReset) -> None:
        if self.resets.past():
            self.calm()
            return
        stream = self.streams.get(event.stream_id)
        if stream is not None:
            stream.closed = True
            self.dropped(stream)

    def terminated(self, event: h2.events.ConnectionTerminated) -> None:
        # The client's GOAWAY: h2 sends nothing after it, so nothing can be answered any more.
        self.end()

    def control(self, event: object = None) -> None:
        if self.controls.past():
            self.calm()

    def calm(self) -> None:
        self.h2.close_connection(ErrorCodes.ENHANCE_YOUR_CALM)
        self.end()

    # -- an Upgrade: h2c request -------------------------------------------------------------

    def upgrade(self, exchange: Http1Exchange, settings: bytes, rest: bytes) -> None:
        """Its head is read (llhttp stops there): its body, if any, then ``101``, and it is stream 1."""
        self.upgrading = exchange
        self.upgrade_settings = settings
        self.early = rest
        self.connections.wait(self, IDLE, self.edge.timeouts.body)
        self.upgrade_body_arrived()

    def upgrade_body_arrived(self) -> None:
        exchange = self.upgrading
        assert exchange is not None
        length = content_length(exchange.headers)
        if len(self.early) < length:
            return
        self.upgrading = None
        body, rest = self.early[:length], self.early[length:]
        self.early = b""
        self.transport.write(SWITCHING)
        self.h2.initiate_upgrade_connection(self.upgrade_settings)
        self.begin()
        headers = [(name, value) for name, value in exchange.headers if name not in UPGRADE_ONLY]
        stream = Http2Stream(self, 1, exchange.method, exchange.target, headers, length)
        self.add(stream)
        stream.store(body)
        stream.complete = True
        self.start(stream)
        if rest:
            self.data_received(rest)
        else:
            self.frame_all()

    # -- calls -------------------------------------------------------------------------------

    def add(self, stream: Http2Stream) -> None:
        if not self.streams:
            self.phase = CALLED  # no read deadline while a stream's call runs (connections.py)
            if self.timer is None:
                self.timer = asyncio.get_running_loop().call_later(CHECK_SECONDS, self.check)
        self.streams[stream.id] = stream

    def start(self, stream: Http2Stream) -> None:
        if stream.length is None and stream.received:
            # DATA frames alone framed it (RFC 9113 section 8.1): the call gets the length it turned out to have.
            stream.headers.append((b"content-length", str(stream.received).encode("ascii")))
        stream.started = True
        self.runner.start(stream)

    def refuse(self, stream: Http2Stream, reply: Reply) -> None:
        """Answered by the edge (no call): ``reply``, then the rest of the request is not read."""
        stream.call_done = True
        self.respond(stream, reply.status, list(reply.headers), (reply.body,), True)
        if not stream.closed:
            stream.body_skipped = True

    def finished(self, stream: Http2Stream) -> None:
        stream.call_done = True
        if stream.end_requested and stream.complete:
            self.settle(stream)  # its answer went out whole as it was framed: nothing more to send
            return
        if not stream.end_requested and not stream.closed:
            self.reset(stream, ErrorCodes.INTERNAL_ERROR)  # the call ended without an answer
        self.settle(stream)
        self.write_out()  # a reset: of an aborted answer, or of a request not read whole

    def abort(self, stream: Http2Stream, answer: Answer | None) -> None:
        if stream.closed or stream.end_requested or self.dead:
            return  # the call's own answer went first
        if answer is not None and not stream.head_sent:
            status, headers, body = answer
            self.respond(stream, status, headers, (body,), True)
        else:
            self.reset(stream, ErrorCodes.INTERNAL_ERROR)

    def settle(self, stream: Http2Stream) -> None:
        """Forget a stream once its call is done and our side of it is over."""
        if not (stream.call_done and stream.closed) or self.streams.get(stream.id) is not stream:
            return
        del self.streams[stream.id]
        stream.release()
        if not stream.complete and not stream.client_gone and not self.dead:
            # Answered before the client sent all of its request (a refusal, a 413): it need send no more.
            try:
                self.h2.reset_stream(stream.id, ErrorCodes.NO_ERROR)
            except h2.exceptions.StreamClosedError:
                pass
        if not self.streams:
            if self.stopping:
                self.goodbye()
            elif not self.dead:
                self.connections.wait(self, IDLE, self.edge.timeouts.keepalive)

    def dropped(self, stream: Http2Stream) -> None:
        """The stream ended on the client's side or ours before its answer did: what it holds goes."""
        stream.gone()
        self.held -= stream.held
        stream.held = 0
        stream.outbox.clear()
        self.sending.pop(stream.id, None)
        if not stream.started:
            stream.call_done = True
        self.wake_waiters()
        self.settle(stream)

    def reset(self, stream: Http2Stream, code: int) -> None:
        if not stream.closed and not self.dead:
            try:
                self.h2.reset_stream(stream.id, code)
            except h2.exceptions.StreamClosedError:
                pass
        stream.closed = True
        self.dropped(stream)

    # -- answering ---------------------------------------------------------------------------

    def respond(self, stream: Http2Stream, status: str, headers: Headers, chunks: Iterable[bytes], end: bool) -> None:
        if stream.closed or stream.end_requested or self.dead:
            return
        data = chunks if isinstance(chunks, (list, tuple)) else list(chunks)
        if not stream.head_sent:
            stream.head_sent = True
            code = int(status[:3])
            parts = [b""]  # the :status, once the code is known to be final
            length, dated = answer_fields(headers, parts)
            if not dated:  # an origin server with a clock sends Date (RFC 9110 section 6.6.1), as HTTP/1.1 answers do
                parts.append(date_field())
            if stream.method == "HEAD" or code in BODILESS_CODES or code < 200:
                stream.bodiless = True
            elif end and length is None:
                parts.append(plain_field("content-length", str(sum(len(chunk) for chunk in data))))
            if code >= 200:
                parts[0] = plain_field(":status", status[:3])
                fields: list[Any] = [EncodedFields(b"", b"".join(parts))]
            else:  # h2 must see an informational answer's :status
                fields = [(b":status", status[:3].encode("ascii")), EncodedFields(b"", b"".join(parts))]
            head_only = end and (stream.bodiless or not any(data))
            try:
                self.h2.send_headers(stream.id, fields, end_stream=head_only)
            except h2.exceptions.ProtocolError:
                self.reset(stream, ErrorCodes.INTERNAL_ERROR)
                return
            if head_only:
                stream.end_requested = stream.closed = True
                self.settle(stream)
                self.write_out()
                return
            if end and len(data) == 1 and not stream.bodiless and not self.write_paused and len(data[0]) <= SMALLEST_FRAME:
                # A whole answer in one frame (most are): sent now, without the outbox's bookkeeping.
                try:
                    self.h2.send_data(stream.id, data[0], end_stream=True)
                except h2.exceptions.FlowControlError:
                    pass  # the windows hold it back: it waits in the outbox
                except h2.exceptions.StreamClosedError:
                    stream.end_requested = stream.closed = True
                    self.settle(stream)
                    return
                else:
                    stream.end_requested = stream.closed = True
                    self.settle(stream)
                    self.write_out()
                    return
        if not stream.bodiless:
            for chunk in data:
                if chunk:
                    stream.outbox.append(chunk)
                    stream.held += len(chunk)
                    self.held += len(chunk)
        if end:
            stream.end_requested = True
        self.frame(stream)
        self.write_out()

    def frame(self, stream: Http2Stream) -> None:
        """DATA frames of ``stream``'s held answer, as far as the windows and the socket allow."""
        h2conn = self.h2
        stream_id = stream.id
        outbox = stream.outbox
        sent = 0
        try:
            while outbox and not self.write_paused:
                window = h2conn.local_flow_control_window(stream_id)
                if window <= 0:
                    break
                chunk = outbox[0]
                size = min(window, h2conn.max_outbound_frame_size, len(chunk))
                if size == len(chunk):
                    outbox.popleft()
                else:
                    outbox[0] = chunk[size:]
                    chunk = chunk[:size]
                sent += size
                h2conn.send_data(stream_id, chunk, end_stream=stream.end_requested and not outbox)
            if not outbox and stream.end_requested and not stream.closed:
                if not sent:
                    h2conn.end_stream(stream_id)
                stream.closed = True
        except (h2.exceptions.StreamClosedError, h2.exceptions.FlowControlError):
            stream.closed = True
        if sent:
            stream.held -= sent
            self.held -= sent
            stream.progress = time.monotonic()
        if outbox and not stream.closed:
            self.sending[stream_id] = stream
            return
        self.sending.pop(stream_id, None)
        if stream.closed and outbox:
            self.dropped(stream)
        elif stream.closed:
            self.settle(stream)

    def frame_all(self) -> None:
        if self.sending:
            for stream in list(self.sending.values()):
                self.frame(stream)
        self.write_out()
        if self.waiters:
            self.wake_waiters()

    def wake_waiters(self) -> None:
        waiting, self.waiters = self.waiters, []
        for stream, callback in waiting:
            if stream.closed or stream.pending() <= DRAINED:
                callback()
            else:
                self.waiters.append((stream, callback))

    def write_out(self) -> None:
        data = self.h2.data_to_send()
        if data and not self.transport.is_closing():
            self.transport.write(data)

    def pause_writing(self) -> None:
        # The client reads slower than we frame: nothing more is framed, and nothing read, until it catches up.
        self.write_paused = True
        if not self.read_paused:
            self.read_paused = True
            self.transport.pause_reading()

    def resume_writing(self) -> None:
        self.write_paused = False
        if self.read_paused and not self.dead:
            self.read_paused = False
            self.transport.resume_reading()
        self.frame_all()

    # -- deadlines, stopping, closing -----------------------------------------------------------

    def check(self) -> None:
        """Every CHECK_SECONDS while streams are open: a body that pauses too long, an answer nobody takes."""
        self.timer = None
        if self.dead:
            return
        now = time.monotonic()
        timeouts = self.edge.timeouts
        for stream in list(self.sending.values()):
            if now - stream.progress > timeouts.send:
                self.reset(stream, ErrorCodes.CANCEL)
        for stream in list(self.streams.values()):
            if not stream.complete and not stream.started and not stream.call_done and now - stream.progress > timeouts.body:
                self.refuse(stream, REQUEST_TIMEOUT)
        self.write_out()
        if self.streams:
            self.timer = asyncio.get_running_loop().call_later(CHECK_SECONDS, self.check)

    def unsent(self) -> int:
        return self.held + (0 if self.dead else self.transport.get_write_buffer_size())

    def timed_out(self) -> None:
        if self.upgrading is not None:  # the upgrade's body did not come: HTTP/1.1's 408
            self.transport.write(REQUEST_TIMEOUT.http_head(("Connection", "close")) + REQUEST_TIMEOUT.body)
            self.close()
            return
        self.goodbye()

    def evict(self) -> None:
        self.goodbye()

    def unread(self) -> int:
        return 0 if self.dead else unread_bytes(self.transport)

    def let_in(self) -> None:  # never held: it was let in as HTTP/1.1
        pass

    def send_stalled(self) -> None:
        self.transport.abort()

    def goodbye(self) -> None:
        """Idle past the keep-alive timeout, or its room wanted: GOAWAY, and closed."""
        if not self.dead:
            self.h2.close_connection()
            self.end()

    def stop(self, *, close_idle: bool = True) -> None:
        """The worker stops: new streams are refused; once those in flight have answered, GOAWAY and closed.

        The GOAWAY waits for them: a client on the h2 library (as the kit's) takes no frame after one.
        ``close_idle`` is HTTP/1.1's (worker.drain): GOAWAY tells an HTTP/2 client to go elsewhere, with no race.
        """
        if self.dead or self.stopping:
            return
        self.stopping = True
        if self.upgrading is not None:
            self.end()
        elif not self.streams:
            self.goodbye()

    def end(self) -> None:
        """The connection is over: what h2 queued goes out, and every stream's client is gone."""
        if self.dead:
            return
        self.write_out()
        self.dead = True
        for stream in list(self.streams.values()):
            stream.closed = True
            self.dropped(stream)
        self.close()

    def close(self) -> None:
        if not self.transport.is_closing():
            self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self.dead = True
        for stream in list(self.streams.values()):
            stream.closed = True
            self.dropped(stream)
        self.wake_waiters()
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        self.connections.closed(self)
        self.edge.closed(self)

    def eof_received(self) -> bool:
        return False


def date_field() -> bytes:
    """The edge's own Date field's bytes (a literal not indexed: its value changes every second), made once a second."""
    global _date_field
    date = DATE.text
    if date != _date_field[0]:
        _date_field = (date, field_bytes(b"date", date.encode("ascii"), False))
    return _date_field[1]


_date_field = ("", b"")


HANDLERS: dict[type, Callable[[Http2Connection, Any], None]] = {
    h2.events.RequestReceived: Http2Connection.request_received,
    h2.events.DataReceived: Http2Connection.data,
    h2.events.TrailersReceived: Http2Connection.trailers,
    h2.events.StreamReset: Http2Connection.stream_reset,
    h2.events.ConnectionTerminated: Http2Connection.terminated,
    h2.events.PingReceived: Http2Connection.control,
    h2.events.RemoteSettingsChanged: Http2Connection.control,
}


class Http2Entry:
    """A worker's HTTP/2: who may speak it, its limits, and the hand-over from HTTP/1.1."""

    def __init__(self, edge: Edge, cfg: Any, max_streams: int) -> None:
        self.edge = edge
        self.max_streams = max_streams
        #: Streams made whole in this turn of the loop, whose calls start at its end (:meth:`start_soon`).
        self.whole: list[Http2Stream] = []
        self.header_list_size = getattr(cfg, "http2_max_header_list_size", 0) or HEAD_LIMIT
        limits = edge.limits
        self.limits = limits
        self.body_limit = limits.body
        self.body_too_large = limits.body_too_large
        self.settings = {
            SettingCodes.MAX_CONCURRENT_STREAMS: max_streams,
            SettingCodes.MAX_HEADER_LIST_SIZE: self.header_list_size,
            SettingCodes.INITIAL_WINDOW_SIZE: STREAM_WINDOW,
            SettingCodes.ENABLE_PUSH: 0,
        }
        # Header sections are checked here, stream by stream (h2's own checks end the whole connection).
        self.h2_config = h2.config.H2Configuration(
            client_side=False,
            header_encoding=None,
            validate_inbound_headers=False,
            normalize_inbound_headers=False,
            validate_outbound_headers=False,
            normalize_outbound_headers=False,
        )
        allowed = [str(address).strip() for address in getattr(cfg, "forwarded_allow_ips", ["127.0.0.1", "::1"])]
        self.everyone = "*" in allowed
        self.networks = []
        for address in allowed:
            if address and address != "*":
                try:
                    self.networks.append(ipaddress.ip_network(address, strict=False))
                except ValueError:
                    continue

    def start_soon(self, stream: Http2Stream) -> None:
        """Start the stream's call with the others made whole in this turn of the loop, once its reads are done.

        Starting a call wakes a thread. Woken between two of the loop's reads, it
        takes the GIL the loop lets go of between them, and the loop waits to get
        it back: four thread switches a call under h2load, against one when the
        turn's calls start at its end (``perf stat``; docs/performance.md#http2).
        """
        if not self.whole:
            self.edge.runner.loop.call_soon(self.start_whole)
        self.whole.append(stream)

    def start_whole(self) -> None:
        whole, self.whole = self.whole, []
        for stream in whole:
            if not stream.client_gone and not stream.started:
                stream.conn.start(stream)

    def trusted(self, peer: tuple[str, int] | None) -> bool:
        """Whether the peer may speak HTTP/2 without TLS: gunicorn's forwarded_allow_ips, as its own h2c has it."""
        if self.everyone or peer is None:
            return True
        try:
            address = ipaddress.ip_address(peer[0])
        except ValueError:
            return False
        return any(address in network for network in self.networks)

    # -- the hand-over from HTTP/1.1 ---------------------------------------------------------------

    def prior_knowledge(self, conn: Http1Connection, opening: bytes) -> None:
        """A connection that opened with the preface (``opening`` holds it and what came after)."""
        if not self.trusted(conn.peer):
            conn.send_refusal(MALFORMED_REQUEST)
            return
        connection = Http2Connection(self, conn)
        connection.h2.initiate_connection()
        connection.begin()
        connection.data_received(opening)

    def wanted(self, conn: Http1Connection, exchange: Http1Exchange) -> bytes | None:
        """The ``HTTP2-Settings`` of a request that may be upgraded to HTTP/2, from a trusted peer; None: served as it is."""
        if not self.trusted(conn.peer):
            return None
        return h2c_settings(exchange.http_version, exchange.headers, self.body_limit)

    def upgrade(self, conn: Http1Connection, exchange: Http1Exchange, settings: bytes, rest: bytes) -> None:
        """Switch ``conn`` to HTTP/2; ``rest`` is what followed the request's head."""
        Http2Connection(self, conn).upgrade(exchange, settings, rest)

    def refusal(self, stream: Http2Stream, length: int | None) -> Reply | None:
        """The HTTP/1.1 head's bounds, kept for HTTP/2 too: the target's length, the number and size of fields."""
        limits = self.limits
        if limits.request_line and len(stream.target) > limits.request_line:
            return URI_TOO_LONG
        if len(stream.headers) > limits.fields:
            return HEAD_TOO_LARGE
        if limits.field_size:
            for name, value in stream.headers:
                if len(name) + len(value) > limits.field_size:
                    return HEAD_TOO_LARGE
        return None

