"""A worker's open connections: their deadlines, the room at ``SERVER_MAX_CONNECTIONS``, and the sweep.

Every connection let in is in :attr:`Connections.waiting`, in the order the
edge began waiting on its client (for its first request, a body to come, or
the next request on a kept-alive connection), oldest first; one whose call
runs keeps its place there and is passed over until it waits again. Four
times a second the sweep closes what is past its deadline:

- a connection that never sent a byte, ``SERVER_HEADER_TIMEOUT`` after its
  accept, quietly; a head begun and not ended, ``SERVER_HEADER_TIMEOUT``
  after its first byte, with ``408``;
- a body that pauses ``SERVER_BODY_TIMEOUT``, with ``408``;
- an idle kept-alive connection after ``SERVER_KEEPALIVE_TIMEOUT``, quietly;
- a client that takes nothing of its answer for ``SERVER_SEND_TIMEOUT``,
  dropped.

At ``SERVER_MAX_CONNECTIONS`` a newcomer takes the place of the connection
that has waited longest on its client: an idle kept-alive one, or one
without a complete request silent for :data:`~funcwsgi.serving.admission.EVICT_AFTER`,
never one whose bytes the loop has yet to read. When none can give its
place, the newcomer is held (not parsed) until a place frees; held callers
whose request has arrived go first, and when no place frees for a whole
sweep, connections silent for :data:`QUIET_SECONDS` make room for them.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from time import monotonic
from typing import Protocol

from funcwsgi.serving.admission import EVICT_AFTER

#: How often the deadlines are looked at.
SWEEP_SECONDS = 0.25
#: How long a connection without a complete request must have been silent before it may be closed for
#: a held caller whose request is waiting, when no place was freed for a whole sweep. Otherwise a
#: connection makes room only once silent for EVICT_AFTER (longer than TCP's first retransmission
#: timeout), so a client whose own loop is busy with a burst of connects is not taken for a silent one.
QUIET_SECONDS = SWEEP_SECONDS
#: How long a held caller's request may wait for a place before silent connections make room.
STUCK_SECONDS = 0.1

# Where a connection is, as the sweep sees it.
ACCEPTED = 0  # nothing of a request yet: quiet close at the head's deadline
HEAD = 1  # a request's head begun: 408 at its deadline
BODY = 2  # the head complete, the body not: 408 when it pauses too long
IDLE = 3  # answered, kept alive: quiet close at the keep-alive deadline
CALLED = 4  # a call runs or its answer is being written: no read deadline
HELD = 5  # one past SERVER_MAX_CONNECTIONS, unread until let in


class Timeouts:
    """The slow-client timeouts of one worker, in seconds, read once from the runtime's settings.

    A slotted class, not a NamedTuple: its fields are read for every request, and a slot is read
    faster than a tuple's field. Not a frozen dataclass: that compiles six methods at every start (issue 44).
    """

    __slots__ = ("header", "body", "keepalive", "send")

    def __init__(self, header: float, body: float, keepalive: float, send: float) -> None:
        self.header = header
        self.body = body
        self.keepalive = keepalive
        self.send = send


class Connection(Protocol):
    #: Set by the connection itself to CALLED when a call of it runs (no read deadline, no eviction, its place kept
    #: until it waits again); the other phases by the moves below.
    phase: int
    deadline: float
    progress: float  # when the client last sent a byte (or was accepted)

    def timed_out(self) -> None: ...

    def let_in(self) -> None: ...

    def evict(self) -> None: ...

    def unread(self) -> int: ...

    def send_stalled(self) -> None: ...

    def unsent(self) -> int: ...


class Connections:
    """The worker's connections, by how long they have waited on their client."""

    def __init__(self, limit: int, timeouts: Timeouts) -> None:
        self.limit = limit  # 0: no bound
        self.timeouts = timeouts
        self.counted: set[Connection] = set()  # let in, and not closed yet
        self.waiting: OrderedDict[Connection, None] = OrderedDict()
        #: Past the limit, oldest first: those whose client sent nothing yet, and those with a request waiting.
        self.held_silent: OrderedDict[Connection, None] = OrderedDict()
        self.held_asking: OrderedDict[Connection, float] = OrderedDict()  # and since when it asks
        self.sending: dict[Connection, tuple[int, float]] = {}  # unsent bytes, and until when they may stay so

    # -- a connection's moves ---------------------------------------------------------

    def arrived(self, conn: Connection) -> bool:
        """A new connection; False: it is held (no room), and is not read until :meth:`let_in` is called on it."""
        if self.limit and len(self.counted) >= self.limit and not self.evict_one(EVICT_AFTER):
            conn.phase, conn.progress = HELD, time.monotonic()
            self.held_silent[conn] = None
            return False
        self.counted.add(conn)
        self.waiting[conn] = None
        self.wait(conn, ACCEPTED, self.timeouts.header)
        return True

    def asking(self, conn: Connection) -> None:
        """A held connection's client sent its first bytes: it is let in before the silent ones."""
        if self.held_silent.pop(conn, 0) is None:
            self.held_asking[conn] = conn.progress = time.monotonic()

    def wait(self, conn: Connection, phase: int, timeout: float) -> None:
        """The edge waits on ``conn``'s client, at most ``timeout`` seconds: it goes last in the order."""
        now = monotonic()
        conn.phase, conn.deadline, conn.progress = phase, now + timeout, now
        try:
            self.waiting.move_to_end(conn)
        except KeyError:  # an HTTP/2 connection's first wait: one let in is there from then to its close
            self.waiting[conn] = None

    def wrote(self, conn: Connection) -> None:
        """An answer was handed to the transport: if the client has not taken it all, the send deadline runs.

        A connection calls this only when its transport holds bytes still (reading its buffer's size costs less than this call).
        """
        unsent = conn.unsent()
        if unsent and conn not in self.sending:
            self.sending[conn] = (unsent, time.monotonic() + self.timeouts.send)

    def closed(self, conn: Connection) -> None:
        """``conn`` closed (or is closing): its place goes to a held one."""
        if conn.phase == HELD:
            self.held_silent.pop(conn, None)
            self.held_asking.pop(conn, None)
            return
        if conn not in self.counted:
            return  # counted out already, when it was evicted
        self.counted.discard(conn)
        self.waiting.pop(conn, None)
        self.sending.pop(conn, None)
        self.let_held_in()

    def replace(self, old: Connection, new: Connection) -> None:
        """``new`` speaks for ``old`` from now on (HTTP/2 took its transport): its place, and its send deadline."""
        if old in self.counted:
            self.counted.discard(old)
            self.counted.add(new)
        self.waiting.pop(old, None)
        sending = self.sending.pop(old, None)
        if sending is not None:
            self.sending[new] = sending

    def let_held_in(self) -> None:
        """Held connections take the free places: those with a request waiting first, then the oldest."""
        while (self.held_asking or self.held_silent) and (not self.limit or len(self.counted) < self.limit):
            newcomer, _ = (self.held_asking or self.held_silent).popitem(last=False)
            self.counted.add(newcomer)
            self.waiting[newcomer] = None
            silent_since = newcomer.progress  # its accept, or its first byte: held time is its client's silence too
            self.wait(newcomer, ACCEPTED, self.timeouts.header)
            newcomer.progress = silent_since
            newcomer.let_in()

    # -- room, and the deadlines --------------------------------------------------------

    def evict_one(self, silent_for: float) -> bool:
        """Close the connection that has waited longest on its client, idle or silent for ``silent_for``; False if none can go.

        One with bytes the loop has not read yet is passed over: a loop behind a burst would
        otherwise take a caller whose request has arrived for a silent one and drop it unanswered.
        """
        now = time.monotonic()
        for conn in self.waiting:
            phase = conn.phase
            if phase != CALLED and (phase == IDLE or now - conn.progress >= silent_for) and not conn.unread():
                conn.evict()
                self.closed(conn)  # now: its transport tells it is closed only on the loop's next turn
                return True
        return False

    def sweep(self) -> None:
        now = time.monotonic()
        late = []
        for conn in self.waiting:
            if conn.deadline <= now and conn.phase != CALLED:
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
        # A held caller's request has waited STUCK_SECONDS for a place (none freed): the connections silent
        # for QUIET_SECONDS make room for every held one, callers with a request first (a flood that never
        # sends locks nobody out). Otherwise only the silent for EVICT_AFTER do, so a burst of honest
        # clients slow to send their requests is not taken for a flood.
        held = len(self.held_asking) + len(self.held_silent)
        stuck = bool(self.held_asking) and now - next(iter(self.held_asking.values())) >= STUCK_SECONDS
        for _ in range(held):
            if not self.evict_one(QUIET_SECONDS if stuck else EVICT_AFTER):
                break
