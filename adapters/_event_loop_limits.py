"""The slow-client limits on gunicorn's event-loop worker: uvicorn's HTTP protocol, bounded as the thread worker is.

uvicorn closes an idle kept-alive connection (``SERVER_KEEPALIVE_TIMEOUT``,
which gunicorn's ``keepalive`` hands it) and nothing else: a head that
never ends, a body that stalls, a client that stops reading and a flood of
connections would each hold a connection for ever. :func:`limited_protocol`
makes uvicorn's httptools protocol keep the other limits of
docs/servers.md#slow-and-hostile-clients with the same answers, byte for
byte, as :mod:`adapters.gunicorn_worker` (:mod:`adapters._requests` holds them):

- ``SERVER_HEADER_TIMEOUT``: the head, from the accept (on a kept-alive
  connection, from the next request's first byte); then ``408`` and close,
  or a quiet close if nothing of a request came;
- ``SERVER_BODY_TIMEOUT``: a pause in the body while the function waits for
  it; then ``408`` (if nothing was answered yet) and close;
- ``SERVER_SEND_TIMEOUT``: a response the client takes nothing of; then the
  connection is dropped;
- ``SERVER_MAX_CONNECTIONS``: at the limit the connection that has waited
  longest without a complete request is closed for the new one; when every
  connection has a call, the new one gets the ``503`` and is counted in
  ``function_rejected_total``.

One sweep per worker, every quarter of a second, finds the connections
past their deadline, as the thread worker's loop does.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from adapters._requests import OVERLOADED, REQUEST_TIMEOUT, SWEEP_SECONDS
from funcwsgi.config import Config
from funcwsgi.eventloop.asgi import rejected_counter


@dataclass(frozen=True)
class Bounds:
    header: float
    body: float
    send: float
    connections: int  # 0: no bound
    rejected: Callable[[], None]


class Watch:
    """The worker's connections waiting for a request (oldest first) or for their client to read, swept on the loop."""

    def __init__(self, bounds: Bounds) -> None:
        self.bounds = bounds
        self.waiting: dict[Any, None] = {}  # insertion order: the one that has waited longest first
        self.sending: set[Any] = set()
        self.sweeping = False

    def start(self, loop: Any) -> None:
        if not self.sweeping:
            self.sweeping = True
            loop.call_later(SWEEP_SECONDS, self.sweep, loop)

    def wait(self, protocol: Any, deadline: float | None) -> None:
        self.waiting.pop(protocol, None)
        self.waiting[protocol] = None
        protocol.deadline = deadline

    def evict_one(self, newcomer: Any) -> bool:
        for protocol in self.waiting:
            if protocol is not newcomer:
                self.forget(protocol)
                protocol.transport.close()
                return True
        return False

    def forget(self, protocol: Any) -> None:
        self.waiting.pop(protocol, None)
        self.sending.discard(protocol)

    def sweep(self, loop: Any) -> None:
        loop.call_later(SWEEP_SECONDS, self.sweep, loop)
        now = time.monotonic()
        for protocol in [waiting for waiting in self.waiting if waiting.deadline is not None and waiting.deadline <= now]:
            protocol.timed_out(now)
        for protocol in list(self.sending):
            protocol.check_sending(now)


def limited_protocol(config: Config) -> type[HttpToolsProtocol]:
    """uvicorn's httptools protocol keeping ``config``'s slow-client limits."""
    watch = Watch(
        Bounds(
            header=config.server_header_timeout,
            body=config.server_body_timeout,
            send=config.server_send_timeout,
            connections=config.server_max_connections,
            rejected=rejected_counter(config),
        )
    )
    bounds = watch.bounds

    class LimitedHttpToolsProtocol(HttpToolsProtocol):
        deadline: float | None = None
        started = False  # a request's first byte came, and it is not complete yet
        in_body = False  # its head is complete: the call (the current cycle) has begun
        kept_alive = False
        send_left = 0
        send_deadline = 0.0

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            watch.start(self.loop)
            if bounds.connections and len(self.connections) > bounds.connections and not watch.evict_one(self):
                bounds.rejected()
                transport.write(OVERLOADED.wire)
                transport.close()
                return
            watch.wait(self, time.monotonic() + bounds.header)

        def connection_lost(self, exc: Exception | None) -> None:
            watch.forget(self)
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            if not self.started and self in watch.waiting:
                self.started = True
                if self.kept_alive:  # the next request began: its head has its own deadline
                    self.kept_alive = False
                    self.deadline = time.monotonic() + bounds.header
            super().data_received(data)

        def on_headers_complete(self) -> None:
            super().on_headers_complete()
            if self in watch.waiting:
                self.in_body = True
                self.deadline = time.monotonic() + bounds.body

        def on_body(self, body: bytes) -> None:
            super().on_body(body)
            if self in watch.waiting:
                self.deadline = time.monotonic() + bounds.body  # a pause, from now

        def on_message_complete(self) -> None:
            super().on_message_complete()
            self.started = self.in_body = False
            watch.waiting.pop(self, None)

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                # Idle until the next request: uvicorn's keep-alive timer closes it; evictable meanwhile.
                self.kept_alive = True
                watch.wait(self, None)

        def timed_out(self, now: float) -> None:
            if self.in_body and (self.flow.read_paused or self.cycle.waiting_for_100_continue):
                # Not the client's pause: the function has not taken the body so far, or not asked for it
                # yet (uvicorn sends 100 Continue at the first read; funcwsgi reads before the call).
                self.deadline = now + bounds.body
                return
            watch.forget(self)
            # A 408 for a request begun and not answered yet; closing an idle connection says nothing,
            # since a 408 there could be read as the answer to the request the client is about to send.
            if self.started and not (self.in_body and self.cycle.response_started):
                self.transport.write(REQUEST_TIMEOUT.wire)
            self.transport.close()

        def pause_writing(self) -> None:
            super().pause_writing()
            self.send_left = self.transport.get_write_buffer_size()
            self.send_deadline = time.monotonic() + bounds.send
            watch.sending.add(self)

        def resume_writing(self) -> None:
            watch.sending.discard(self)
            super().resume_writing()

        def check_sending(self, now: float) -> None:
            left = self.transport.get_write_buffer_size()
            if left < self.send_left:  # it reads: more time
                self.send_left = left
                self.send_deadline = now + bounds.send
            elif now >= self.send_deadline:
                watch.forget(self)
                self.transport.abort()

    return LimitedHttpToolsProtocol
