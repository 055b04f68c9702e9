"""Admission by queueing delay: a call waits to start while its wait stays under a target; past it, 503 at once.

One :class:`Admission` per serving process decides, for every path (the
thread worker, the event-loop edge), whether a call may wait:

- **At its arrival** (:meth:`Admission.admit`). With a server free (a
  thread, or on an event loop always) the call starts now. Otherwise its wait
  is predicted from Little's law: the calls ahead of it leave at
  ``servers / service`` per second (``service``: the smoothed time a call
  holds a server), so it would wait ``(ahead + 1) * service / servers``. Past
  :data:`AIM` of ``SERVER_QUEUE_TARGET`` it is refused at once (503 with
  ``Retry-After``), so a refusal costs the caller microseconds, not the target.
- **While the queue stands** (CoDel's test, :meth:`Admission.observe`): when
  every queueing delay measured over a whole :data:`INTERVAL` was at or past
  the target, new calls that would wait are refused at once until a delay
  under the target is seen again. This catches what the prediction cannot
  know (a function that suddenly became slow, an event loop whose lag grew).
- **At its start** (:meth:`Admission.start`): a call that waited past the
  target anyway is refused then, instead of running for a caller who has
  likely given up.

A burst the servers clear within the target is queued whole: 200 calls of
20 ms on 50 threads wait at most 60 ms, and none is refused. docs/servers.md
says why this, against Knative's queue-proxy, gunicorn's backlog and Envoy's
adaptive concurrency. nodejs26/lib/admission.js is the same algorithm.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

#: CoDel's interval: the delay must have stood at the target this long before the queue counts as standing.
INTERVAL = 0.1
#: The prediction aims this far under the target, so that the calls it lets wait start within it
#: (a service time varies, and calls ahead may all have begun together); the start is the backstop.
AIM = 0.9
#: Weight of the newest call in the smoothed service time (an exponentially weighted mean).
SMOOTHING = 0.1
#: A connection that has sent nothing (or stalled) this long may be closed for a new one at
#: SERVER_MAX_CONNECTIONS; a younger one never is. Longer than TCP's first retransmission timeout
#: (1 s, RFC 6298), so an honest request whose first segment was lost, or a client whose own loop is
#: busy with a burst, is not taken for a silent one.
EVICT_AFTER = 2.0


def _ignore(seconds: float) -> None:
    pass


class Admission:
    """The admission decisions of one serving process; see the module's documentation.

    ``servers``: calls served at once (threads); 0 on an event loop, where a
    call starts at once and the queueing delay is the loop's lag. ``record``
    receives each call's queueing delay (the metrics' histogram).
    """

    __slots__ = ("target", "servers", "clock", "interval", "record", "service", "above_since", "standing", "delay")

    def __init__(
        self,
        target: float,
        servers: int = 0,
        *,
        clock: Callable[[], float] = time.monotonic,
        interval: float = INTERVAL,
        record: Callable[[float], None] = _ignore,
    ) -> None:
        self.target = target
        self.servers = servers
        self.clock = clock
        self.interval = interval
        self.record = record
        self.service = 0.0  # smoothed seconds a call holds a server; 0 until one finished
        self.above_since: float | None = None  # since when every delay observed was at or past the target
        self.standing = False
        self.delay = 0.0  # the last queueing delay observed

    def observe(self, delay: float) -> None:
        """A queueing delay measured now: a call's wait at its start, or an event loop's lag."""
        self.delay = delay
        if delay < self.target:
            self.above_since = None
            self.standing = False
            return
        now = self.clock()
        if self.above_since is None:
            self.above_since = now
        elif now - self.above_since >= self.interval:
            self.standing = True

    def admit(self, inflight: int) -> bool:
        """A call arrives with ``inflight`` others admitted and not finished: False to refuse it at once."""
        if not self.servers:
            return not self.standing
        ahead = inflight - self.servers
        if ahead < 0:  # a server is free: the call starts now
            return True
        if self.standing:
            return False
        return (ahead + 1) * self.service <= AIM * self.target * self.servers

    def start(self, waited: float) -> bool:
        """A call leaves the queue after ``waited`` seconds: False when it waited past the target (refuse it now)."""
        self.observe(waited)
        self.record(waited)
        return waited <= self.target

    def finished(self, seconds: float) -> None:
        """A call held its server ``seconds``."""
        service = self.service
        self.service = seconds if not service else service + SMOOTHING * (seconds - service)

    def __repr__(self) -> str:
        return f"Admission(target={self.target!r}, servers={self.servers!r})"


def admission_for(config: Any, servers: int) -> Admission:
    """The process's admission for ``config``, each call's queueing delay recorded in the metrics."""
    record = _ignore
    if config.server_metrics:
        from ..metrics.calls import call_metrics

        record = call_metrics(config).waited
    return Admission(config.server_queue_target, servers, record=record)
