"""Turning SIGTERM and SIGINT into a graceful stop, for servers that do not do it themselves."""

from __future__ import annotations

import logging
import signal
import threading
import time
from collections.abc import Callable
from types import FrameType

log = logging.getLogger("funcwsgi")

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


class StopRequest:
    """Set by the first SIGTERM/SIGINT; the server's loop checks it and drains."""

    def __init__(self, on_stop: Callable[[], None] = lambda: None) -> None:
        self.event = threading.Event()
        self.deadline = float("inf")
        self.on_stop = on_stop

    def install(self, graceful_timeout: float) -> None:
        def handler(signum: int, frame: FrameType | None) -> None:
            if self.event.is_set():
                return
            log.info("Received %s: no new connections; waiting up to %gs for calls in flight", signal.Signals(signum).name, graceful_timeout)
            self.deadline = time.monotonic() + graceful_timeout
            self.event.set()
            self.on_stop()

        for signum in STOP_SIGNALS:
            signal.signal(signum, handler)

    def is_set(self) -> bool:
        return self.event.is_set()

    def left(self) -> float:
        return max(0.0, self.deadline - time.monotonic())
