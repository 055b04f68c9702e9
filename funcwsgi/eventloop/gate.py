"""Admission on the event loop, for every server that runs calls on it (through the ASGI side or not).

A call on the loop starts at once unless the loop's lag, its queueing
delay, has stood past ``SERVER_QUEUE_TARGET`` (:mod:`funcwsgi.serving.admission`),
or ``SERVER_MAX_INFLIGHT`` calls are in flight; then it is refused with
``503`` and ``Retry-After``, probes and ``/metrics`` excepted. The loop's lag
is measured on the loop itself, and the watch on a blocked loop
(:mod:`.watch`) is started with the first call.

Each admitted call's queueing delay is the lag measured last, the same for
every call until the next measurement; so the gate counts the calls it admits
and records them in one step (``function_queueing_delay_seconds``) at the next
measurement and before every scrape of this process's metrics, rather than one
by one: recording one call took about 3,000 instructions of its CPU
(``python -m bench.edge_calls --count``), counting it a few.
"""

from __future__ import annotations

import asyncio
import atexit
import threading
from collections.abc import Callable
from typing import Any

from ..serving import exempt_paths, rejected_counter
from ..serving.admission import admission_for
from .watch import LOOP_WATCH

#: How often the loop's lag (a call's queueing delay on the loop) is measured: five times per CoDel interval.
LAG_TICK = 0.02


class LoopGate:
    """The calls in flight on one process's loop, and whether one more may start."""

    __slots__ = ("limit", "inflight", "admission", "loop", "rejected", "exempt", "watch", "admitted", "recorded", "record_waits", "flushing")

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
        #: Calls admitted (outside the exempt paths), and how many of them have their wait recorded.
        self.admitted = 0
        self.recorded = 0
        #: Records (seconds, calls): the metrics' queueing delays; None without metrics.
        self.record_waits: Callable[[float, int], None] | None = None
        #: The loop's tick and a scrape on another thread both record the waits counted.
        self.flushing = threading.Lock()
        if config.server_metrics:
            from ..metrics.calls import call_metrics

            metrics = call_metrics(config)
            self.record_waits = metrics.waited
            metrics.before_collect(self.record_admitted)
            atexit.register(self.record_admitted)  # a stopping worker's last waits reach its metrics' files

    def enter(self, path: str) -> bool:
        """On the loop, as a call to ``path`` arrives: True, it runs (in flight until :meth:`left`); False, refused and counted.

        The edge worker's loop calls do the same inline (its loop_calls.py): a change here goes there too.
        """
        if path not in self.exempt:
            admission = self.admission
            # admission.admit(0), inlined: on a loop (no servers to wait for) a call is refused only while the queue stands.
            if (self.limit and self.inflight >= self.limit) or admission.standing:
                self.rejected()
                return False
            self.admitted += 1  # its wait, the lag measured last, is recorded with the others' (record_admitted)
        self.inflight += 1
        return True

    def record_admitted(self) -> None:
        """Record the wait of the calls admitted since the last time: the lag measured last, each."""
        if self.record_waits is None:
            return
        with self.flushing:
            calls = self.admitted - self.recorded
            if calls:
                self.recorded += calls
                self.record_waits(self.admission.delay, calls)

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
        self.record_admitted()  # at the lag they waited, before it changes
        self.admission.observe(max(0.0, now - due))
        loop.call_at(now + LAG_TICK, self.tick, loop, now + LAG_TICK)
