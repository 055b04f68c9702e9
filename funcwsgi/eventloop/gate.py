"""Admission on the event loop, for every server that runs calls on it (through the ASGI side or not).

A call on the loop starts at once unless the loop's lag, its queueing
delay, has stood past ``SERVER_QUEUE_TARGET`` (:mod:`funcwsgi.serving.admission`),
or ``SERVER_MAX_INFLIGHT`` calls are in flight; then it is refused with
``503`` and ``Retry-After``, probes and ``/metrics`` excepted. The loop's lag
is measured on the loop itself, and the watch on a blocked loop
(:mod:`.watch`) is started with the first call.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ..serving import exempt_paths, rejected_counter
from ..serving.admission import admission_for
from .watch import LOOP_WATCH

#: How often the loop's lag (a call's queueing delay on the loop) is measured: five times per CoDel interval.
LAG_TICK = 0.02


class LoopGate:
    """The calls in flight on one process's loop, and whether one more may start."""

    __slots__ = ("limit", "inflight", "admission", "loop", "rejected", "exempt", "watch")

    def __init__(self, config: Any, loaded: Any) -> None:
        self.limit = config.max_inflight
        self.inflight = 0
        self.admission = admission_for(config, 0)
        #: The loop the lag is measured on (a forked worker, or a new loop, starts again).
        self.loop: asyncio.AbstractEventLoop | None = None
        self.rejected = rejected_counter(config)
        self.exempt = exempt_paths(config)
        self.watch = LOOP_WATCH if config.server_loop_blocked_seconds > 0 else None
        if self.watch is not None:
            self.watch.configure(config.server_loop_blocked_seconds, loaded.name, loaded.path)

    def enter(self, path: str) -> bool:
        """On the loop, as a call to ``path`` arrives: True, it runs (in flight until :meth:`left`); False, refused and counted."""
        if path not in self.exempt:
            admission = self.admission
            # admission.admit(0), inlined: on a loop (no servers to wait for) a call is refused only while the queue stands.
            if (self.limit and self.inflight >= self.limit) or admission.standing:
                self.rejected()
                return False
            admission.record(admission.delay)
        self.inflight += 1
        return True

    def left(self) -> None:
        self.inflight -= 1

    def watch_loop(self, loop: asyncio.AbstractEventLoop) -> None:
        """Start measuring ``loop``'s lag and watching it for blocking code, if that is not done yet."""
        if self.watch is not None and not self.watch.running:
            self.watch.ensure_running()
        if self.loop is loop:
            return
        self.loop = loop
        due = loop.time() + LAG_TICK
        loop.call_at(due, self.tick, loop, due)

    def tick(self, loop: asyncio.AbstractEventLoop, due: float) -> None:
        """How late ``loop`` ran this (due at ``due``): the queueing delay of a call on it now."""
        now = loop.time()
        self.admission.observe(max(0.0, now - due))
        loop.call_at(now + LAG_TICK, self.tick, loop, now + LAG_TICK)
