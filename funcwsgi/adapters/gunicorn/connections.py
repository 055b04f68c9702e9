"""A worker's open connections: their deadlines, the room at ``SERVER_MAX_CONNECTIONS``, and the sweep.

Every connection is in :attr:`Connections.waiting` while the edge waits on
its client (a head or a body to come, or the next request on a kept-alive
connection), oldest first, and out of it while one of its calls runs. Four
times a second the sweep closes what is past its deadline:

- a connection that never sent a byte, ``SERVER_HEADER_TIMEOUT`` after its
  accept, quietly; a head begun and not ended, ``SERVER_HEADER_TIMEOUT``
  after its first byte, with ``408``;
- a body that pauses ``SERVER_BODY_TIMEOUT``, with ``408``;
- an idle kept-alive connection after ``SERVER_KEEPALIVE_TIMEOUT``, quietly;
- a client that takes nothing of its answer for ``SERVER_SEND_TIMEOUT``,
  dropped.

At ``SERVER_MAX_CONNECTIONS`` a newcomer takes the place of an idle
kept-alive connection, or of one without a complete request for
:data:`~funcwsgi.serving.admission.EVICT_AFTER`, the longest-waiting first; when no
connection can give its place the newcomer is held unread (as the listen
backlog would hold it) until one closes.
"""

from __future__ import annotations

import time
from collections import OrderedDict, deque
from dataclasses import dataclass
from typing import Protocol

from funcwsgi.serving.admission import EVICT_AFTER

#: How often the deadlines are looked at.
SWEEP_SECONDS = 0.25

# Where a connection is, as the sweep sees it.
ACCEPTED = 0  # nothing of a request yet: quiet close at the head's deadline
HEAD = 1  # a request's head begun: 408 at its deadline
BODY = 2  # the head complete, the body not: 408 when it pauses too long
IDLE = 3  # answered, kept alive: quiet close at the keep-alive deadline
CALLED = 4  # a call runs or its answer is being written: no read deadline
HELD = 5  # one past SERVER_MAX_CONNECTIONS, unread until let in


@dataclass(frozen=True)
class Timeouts:
    header: float
    body: float
    keepalive: float
    send: float


class Connection(Protocol):
    phase: int
    deadline: float
    progress: float  # when the client last sent a byte (or was accepted)

    def timed_out(self) -> None: ...

    def let_in(self) -> None: ...

    def evict(self) -> None: ...

    def send_stalled(self) -> None: ...

    def unsent(self) -> int: ...


class Connections:
    """The worker's connections, by how long they have waited on their client."""

    def __init__(self, limit: int, timeouts: Timeouts) -> None:
        self.limit = limit  # 0: no bound
        self.timeouts = timeouts
        self.count = 0  # let in and open
        self.waiting: OrderedDict[Connection, None] = OrderedDict()
        self.held: deque[Connection] = deque()
        self.sending: dict[Connection, tuple[int, float]] = {}  # unsent bytes, and until when they may stay so

    # -- a connection's moves ---------------------------------------------------------

    def arrived(self, conn: Connection) -> bool:
        """A new connection; False: it is held (no room), and reads nothing until :meth:`let_in` is called on it."""
        if self.limit and self.count >= self.limit and not self.evict_one():
            self.held.append(conn)
            return False
        self.count += 1
        self.wait(conn, ACCEPTED, self.timeouts.header)
        return True

    def wait(self, conn: Connection, phase: int, timeout: float) -> None:
        """The edge waits on ``conn``'s client, at most ``timeout`` seconds."""
        now = time.monotonic()
        conn.phase, conn.deadline, conn.progress = phase, now + timeout, now
        self.waiting[conn] = None
        self.waiting.move_to_end(conn)

    def called(self, conn: Connection) -> None:
        conn.phase = CALLED
        self.waiting.pop(conn, None)

    def wrote(self, conn: Connection) -> None:
        """An answer was handed to the transport: if the client has not taken it all, the send deadline runs."""
        unsent = conn.unsent()
        if unsent and conn not in self.sending:
            self.sending[conn] = (unsent, time.monotonic() + self.timeouts.send)

    def closed(self, conn: Connection) -> None:
        if conn.phase == HELD:
            try:
                self.held.remove(conn)
            except ValueError:
                pass
            return
        self.count -= 1
        self.waiting.pop(conn, None)
        self.sending.pop(conn, None)
        while self.held and (not self.limit or self.count < self.limit):
            newcomer = self.held.popleft()
            self.count += 1
            self.wait(newcomer, ACCEPTED, self.timeouts.header)
            newcomer.let_in()

    # -- room, and the deadlines --------------------------------------------------------

    def evict_one(self) -> bool:
        """Close the longest-waiting idle connection, or one without a complete request for EVICT_AFTER; False if none."""
        now = time.monotonic()
        for conn in self.waiting:
            if conn.phase == IDLE or now - conn.progress >= EVICT_AFTER:
                conn.evict()  # its closing calls closed(), which counts it out
                return True
        return False

    def sweep(self) -> None:
        now = time.monotonic()
        late = []
        for conn in self.waiting:
            if conn.deadline <= now:
                late.append(conn)
        for conn in late:
            conn.timed_out()
        for conn, (unsent, deadline) in list(self.sending.items()):
            left = conn.unsent()
            if not left:
                del self.sending[conn]
            elif left < unsent:  # it reads: more time
                self.sending[conn] = (left, now + self.timeouts.send)
            elif now >= deadline:
                del self.sending[conn]
                conn.send_stalled()
        for _ in range(len(self.held)):  # connections silent for EVICT_AFTER make room for the held ones
            if not self.evict_one():
                break

    def idle(self) -> list[Connection]:
        """The connections waiting on their client (to close when the worker stops)."""
        return list(self.waiting)
