"""The slow-client limits on gunicorn's event-loop worker: uvicorn's HTTP protocol, bounded as the thread worker is.

uvicorn closes an idle kept-alive connection (``SERVER_KEEPALIVE_TIMEOUT``,
which gunicorn's ``keepalive`` hands it) and nothing else: a head that
never ends, a body that stalls, a client that stops reading and a flood of
connections would each hold a connection for ever. :func:`limited_protocol`
makes uvicorn's httptools protocol keep the other limits of
docs/servers.md#slow-and-hostile-clients with the same answers, byte for
byte, as :mod:`funcwsgi.adapters.gunicorn_worker` (:mod:`funcwsgi.adapters._requests` holds them):

- ``SERVER_HEADER_TIMEOUT``: the head, from the accept (on a kept-alive
  connection, from the next request's first byte); then ``408`` and close,
  or a quiet close if nothing of a request came;
- ``SERVER_BODY_TIMEOUT``: a pause in the body (no bytes) while the function
  waits for it (a pipelined request's from when uvicorn starts its call);
  then ``408`` (if nothing was answered yet) and close;
- ``SERVER_SEND_TIMEOUT``: a response the client takes nothing of; then the
  connection is dropped;
- ``SERVER_MAX_CONNECTIONS``: at the limit an idle kept-alive connection,
  or one without a complete request for
  :data:`funcwsgi.serving.admission.EVICT_AFTER`, is closed for the new one, the
  longest-waiting first; when there is none the new one is held unread, as
  the listen backlog would hold it, and let in when a connection closes (an
  idle one gives its place up once answered). No connection is closed
  unanswered for being one too many (asyncio has no public way to stop
  accepting).

One sweep per worker, every quarter of a second, finds the connections
past their deadline, as the thread worker's loop does.

A request adds little to what uvicorn's own protocol costs (``python -m
bench.protocol_cost`` counts it): each read is classified once, after uvicorn
has parsed it, from uvicorn's own state (a new cycle: the head is complete;
its ``more_body``: the body is not); the clock is read only for a request
still incomplete after a read, which is when a deadline matters; and a
connection is moved in the waiting order only when it is answered.
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict, deque
from dataclasses import dataclass
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from funcwsgi.adapters._requests import ABSOLUTE_FORM, REQUEST_TIMEOUT, SWEEP_SECONDS
from funcwsgi.config import Config
from funcwsgi.serving.admission import EVICT_AFTER

# Where a connection is, from the request's side. The first three have a deadline.
ACCEPTED = 0  # nothing of a request yet: the head's deadline runs from the accept
HEAD = 1  # a request's first byte came, not its whole head
BODY = 2  # the head is complete (the call has begun), not the body: its deadline is a pause
KEPT_ALIVE = 3  # answered, idle: uvicorn's keep-alive timer has it
CALLED = 4  # the request is complete: the call has it until it is answered
HELD = 5  # one past SERVER_MAX_CONNECTIONS: unread until let in
#: Sweeps a connection must go without a byte before it may be closed for a new one. A loop busy
#: with a burst reads a new connection's request late: by the third sweep since its last byte (or
#: its accept) at least one whole turn of the loop has read what had arrived, on asyncio's loop and uvloop's.
QUIET_SWEEPS = 3
NO_DEADLINE = math.inf
SLASH = ord("/")


@dataclass(frozen=True)
class Bounds:
    header: float
    body: float
    send: float
    connections: int  # 0: no bound


class Watch:
    """The worker's connections by how long they have waited (oldest first), and those waiting for their client to read.

    ``waiting`` holds every connection since its accept or its last answer,
    in that order; one whose call is running stays where it is (it is skipped,
    and taken out when an eviction passes it), so a request costs one move,
    at its answer.
    """

    def __init__(self, bounds: Bounds) -> None:
        self.bounds = bounds
        self.waiting: OrderedDict[Any, None] = OrderedDict()
        self.sending: set[Any] = set()
        self.held: deque[Any] = deque()  # past the connection limit, oldest first
        self.sweeping = False
        self.sweeps = 0  # sweeps so far: a connection's progress is marked with this count

    def start(self, loop: Any) -> None:
        if not self.sweeping:
            self.sweeping = True
            loop.call_later(SWEEP_SECONDS, self.sweep, loop)

    def evict_one(self, newcomer: Any) -> bool:
        """Closes the longest-waiting idle kept-alive connection, or one without a complete request for EVICT_AFTER; False if none."""
        passed = []
        chosen = None
        now = time.monotonic()
        bounds = self.bounds
        for protocol in self.waiting:
            phase = protocol.phase
            if protocol is newcomer:
                continue
            if phase == CALLED:
                passed.append(protocol)
                continue
            if phase == KEPT_ALIVE:
                chosen = protocol
                break
            began = protocol.deadline - (bounds.body if phase == BODY else bounds.header)  # its accept or its last byte
            if self.sweeps - protocol.mark >= QUIET_SWEEPS and now - began >= EVICT_AFTER:
                chosen = protocol
                break
        for protocol in passed:  # back in at their answers: each call is passed at most once
            del self.waiting[protocol]
        if chosen is None:
            return False
        self.forget(chosen)
        chosen.transport.close()
        return True

    def forget(self, protocol: Any) -> None:
        if protocol.phase == HELD:
            try:
                self.held.remove(protocol)
            except ValueError:
                pass
            return
        self.waiting.pop(protocol, None)
        self.sending.discard(protocol)

    def let_held_in(self, open_connections: int) -> None:
        """Let held connections in while there is room, oldest first."""
        held = self.held
        limit = self.bounds.connections
        active = open_connections - len(held)
        while held and active < limit:
            protocol = held.popleft()
            if protocol.transport.is_closing():
                continue
            active += 1
            protocol.let_in()

    def sweep(self, loop: Any) -> None:
        self.sweeps += 1
        loop.call_later(SWEEP_SECONDS, self.sweep, loop)
        now = time.monotonic()
        for protocol in [waiting for waiting in self.waiting if waiting.phase < KEPT_ALIVE and waiting.deadline <= now]:
            protocol.timed_out(now)
        for protocol in list(self.sending):
            protocol.check_sending(now)
        for _ in range(len(self.held)):  # connections without a request for EVICT_AFTER make room for the held ones
            if not self.evict_one(None):
                break


def framing_problem(target: bytes, method: bytes, headers: list[tuple[bytes, bytes]], version: str) -> str | None:
    """What RFC 9112 refuses in a request uvicorn's parser (llhttp) accepts, or None.

    A target neither origin- nor absolute-form (``GET *``), a Transfer-Encoding
    other than ``chunked`` alone (``identity, chunked``), an HTTP/1.1 request
    without exactly one Host: the thread worker refuses the same
    (:mod:`funcwsgi.adapters._requests`).
    """
    if target[:1] != b"/" and ABSOLUTE_FORM.match(target) is None and not (target == b"*" and method == b"OPTIONS"):
        return "request target"
    hosts = 0
    for name, value in headers:  # uvicorn's: names lower-cased, values stripped
        if name == b"host":
            hosts += 1
        elif name == b"transfer-encoding" and value.lower() != b"chunked":
            return "transfer coding"
    if hosts != 1 and version == "1.1":
        return "host"
    return None


def limited_protocol(config: Config) -> type[HttpToolsProtocol]:
    """uvicorn's httptools protocol keeping ``config``'s slow-client limits."""
    watch = Watch(
        Bounds(
            header=config.server_header_timeout,
            body=config.server_body_timeout,
            send=config.server_send_timeout,
            connections=config.server_max_connections,
        )
    )
    bounds = watch.bounds
    waiting = watch.waiting
    to_the_end = waiting.move_to_end
    header_timeout, body_timeout = bounds.header, bounds.body
    monotonic = time.monotonic
    # uvicorn's methods called straight from the class: on Python 3.11 a zero-argument super()
    # builds an object per call, and these two run for every request.
    uvicorn = HttpToolsProtocol
    uvicorn_data_received = uvicorn.data_received
    uvicorn_response_complete = uvicorn.on_response_complete
    uvicorn_headers_complete = uvicorn.on_headers_complete

    class LimitedHttpToolsProtocol(HttpToolsProtocol):
        # Slots, not instance attributes: uvicorn's protocol sets 28 of those, and past 30 CPython
        # stops sharing an instance dict's keys, which slows every attribute uvicorn reads.
        __slots__ = ("phase", "deadline", "send_left", "send_deadline", "early", "mark")
        phase: int
        mark: int  # the sweep count at its accept or its last byte
        deadline: float
        send_left: int
        send_deadline: float
        early: bytes  # what a held connection sent before its reading was paused

        def connection_made(self, transport: Any) -> None:
            self.phase, self.deadline = ACCEPTED, monotonic() + header_timeout
            self.send_left, self.send_deadline = 0, 0.0
            self.mark = watch.sweeps
            uvicorn.connection_made(self, transport)
            watch.start(self.loop)
            if bounds.connections and len(self.connections) - len(watch.held) > bounds.connections and not watch.evict_one(self):
                self.phase, self.early = HELD, b""
                watch.held.append(self)
                transport.pause_reading()  # uvloop starts reading after this returns: data_received pauses again
                return
            waiting[self] = None

        def let_in(self) -> None:
            self.phase, self.deadline = ACCEPTED, monotonic() + header_timeout
            self.mark = watch.sweeps
            waiting[self] = None
            self.transport.resume_reading()
            early, self.early = self.early, b""
            if early:
                self.data_received(early)

        def connection_lost(self, exc: Exception | None) -> None:
            held = self.phase == HELD
            watch.forget(self)
            uvicorn.connection_lost(self, exc)
            if watch.held and not held:
                watch.let_held_in(len(self.connections))

        def handle_websocket_upgrade(self) -> None:
            # The connection is the websocket protocol's from here on, and never comes back.
            self.phase = CALLED
            watch.forget(self)
            uvicorn.handle_websocket_upgrade(self)

        def data_received(self, data: bytes) -> None:
            phase = self.phase
            if phase == HELD:
                self.early += data
                self.transport.pause_reading()
                return
            if phase == CALLED:  # what comes during a call is uvicorn's (a pipelined request)
                uvicorn_data_received(self, data)
                return
            self.mark = watch.sweeps
            before = self.cycle
            uvicorn_data_received(self, data)
            cycle = self.cycle
            if cycle is before and phase != BODY:  # no new cycle: the head is not complete yet
                if phase != HEAD:
                    if phase == KEPT_ALIVE:  # the next request began: its head has its own deadline
                        self.deadline = monotonic() + header_timeout
                    self.phase = HEAD
            elif not cycle.more_body or self.pipeline:  # complete (and a pipelined one behind it, perhaps)
                self.phase = CALLED
            else:  # the head is complete, not the body: a pause, from now
                self.phase = BODY
                self.deadline = monotonic() + body_timeout

        def on_headers_complete(self) -> None:
            # framing_problem(), inlined: it runs for every request. Raised from the parser's callback, the
            # error makes uvicorn answer its 400 and close, as for what its own parser refuses.
            hosts = 0
            for name, value in self.headers:  # uvicorn's: names lower-cased, values stripped
                if name == b"host":
                    hosts += 1
                elif name == b"transfer-encoding" and value.lower() != b"chunked":
                    raise ValueError("transfer coding")
            if hosts != 1 and self.parser.get_http_version() == "1.1":
                raise ValueError("host")
            url = self.url
            if url[0] != SLASH and framing_problem(url, self.parser.get_method(), [], "") is not None:
                raise ValueError("request target")
            uvicorn_headers_complete(self)

        def on_response_complete(self) -> None:
            uvicorn_response_complete(self)
            if self.timeout_keep_alive_task is not None:  # uvicorn waits for the next request: idle, evictable
                if self.phase == CALLED:
                    self.phase = KEPT_ALIVE
                else:  # answered before its body came whole: the rest of it is still timed, from its next byte
                    self.deadline = NO_DEADLINE
            elif self.pipeline or self.transport.is_closing() or not self.cycle.more_body:
                return  # closing, or a pipelined call started with its body here: the call has it
            else:  # a pipelined call started before its body came whole: timed as any body
                self.phase = BODY
                self.deadline = monotonic() + body_timeout
            try:
                to_the_end(self)
            except KeyError:  # an eviction passed it during its call
                waiting[self] = None
            if watch.held and self.phase == KEPT_ALIVE:  # a held caller waits for room: this idle one gives its place up
                watch.forget(self)
                self.transport.close()

        def timed_out(self, now: float) -> None:
            phase = self.phase
            if phase == BODY and (self.flow.read_paused or self.cycle.waiting_for_100_continue):
                # Not the client's pause: the function has not taken the body so far, or not asked for it
                # yet (uvicorn sends 100 Continue at the first read; funcwsgi reads before the call).
                self.deadline = now + body_timeout
                return
            watch.forget(self)
            # A 408 for a request begun and not answered yet; closing an idle connection says nothing,
            # since a 408 there could be read as the answer to the request the client is about to send.
            if phase == HEAD or (phase == BODY and not self.cycle.response_started):
                self.transport.write(REQUEST_TIMEOUT.wire)
            self.transport.close()

        def pause_writing(self) -> None:
            uvicorn.pause_writing(self)
            self.send_left = self.transport.get_write_buffer_size()
            self.send_deadline = monotonic() + bounds.send
            watch.sending.add(self)

        def resume_writing(self) -> None:
            watch.sending.discard(self)
            uvicorn.resume_writing(self)

        def check_sending(self, now: float) -> None:
            left = self.transport.get_write_buffer_size()
            if left < self.send_left:  # it reads: more time
                self.send_left = left
                self.send_deadline = now + bounds.send
            elif now >= self.send_deadline:
                watch.forget(self)
                self.transport.abort()

    return LimitedHttpToolsProtocol
