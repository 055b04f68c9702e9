"""Watching the event loop for code that blocks it: sync work inside ``async def``.

On the loop every call shares one thread; a coroutine that calls
``time.sleep()``, a blocking client or a long computation without awaiting
stops all of them. The loop beats a few times a second; a watcher thread
that sees no beat for ``SERVER_LOOP_BLOCKED_SECONDS`` logs the function's
name and where the loop thread is stuck, and from then on the liveness
probe fails, so the platform replaces the process. The cure is in the
function: ``await asyncio.to_thread(blocking_call, ...)``.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
import traceback
from typing import Any

log = logging.getLogger("funcwsgi.loop")


class LoopWatch:
    """One per process: the loop's heartbeat and the thread that watches it."""

    def __init__(self) -> None:
        self.threshold = 0.0
        self.name = "main"
        self.path = ""
        self.pid = 0
        self.running = False  # in this process: a forked child has no watcher thread
        self.beat = 0.0
        self.problem: str | None = None
        self.loop: Any = None
        self.loop_thread = 0

    def configure(self, threshold: float, name: str, path: str) -> None:
        self.threshold, self.name, self.path = threshold, name, path

    def ensure_running(self) -> None:
        """Start watching the running loop, once per process (a forked worker starts again)."""
        if self.running:
            return
        import asyncio  # here: the sync path imports this module (for the probe), never asyncio

        self.running = True
        self.pid = os.getpid()
        self.loop = asyncio.get_running_loop()
        self.loop_thread = threading.get_ident()
        self.interval = min(0.25, self.threshold / 4)
        self.tick()
        threading.Thread(target=self.watch, name="funcwsgi-loop-watch", daemon=True).start()

    def tick(self) -> None:
        self.beat = time.monotonic()
        assert self.loop is not None
        self.loop.call_later(self.interval, self.tick)

    def watch(self) -> None:
        reported = False
        while True:
            time.sleep(self.interval)
            stalled = time.monotonic() - self.beat
            if stalled < self.threshold:
                reported = False
                continue
            if reported:
                continue
            reported = True
            frame = sys._current_frames().get(self.loop_thread)
            where = "".join(traceback.format_stack(frame)) if frame is not None else "(no stack)"
            self.problem = (
                f"the event loop was blocked for over {self.threshold:g}s by {self.name}() in {self.path}: "
                "blocking code inside async def; run it with asyncio.to_thread"
            )
            log.error("Event loop blocked for %.1fs in %s() (%s); use await asyncio.to_thread(...) for blocking code. The loop thread is at:\n%s",
                      stalled, self.name, self.path, where)

    def liveness_problem(self) -> str | None:
        return self.problem


#: The process's one watch (one loop per worker process).
LOOP_WATCH = LoopWatch()


def _not_running_in_child() -> None:
    LOOP_WATCH.running = False
    LOOP_WATCH.problem = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_not_running_in_child)
