"""Functions that overrun their deadline, and the bounds an answer on time is judged by: what the hand-off and watchdog tests share."""

from __future__ import annotations

import contextvars
import threading
import time

from funcwsgi.timeouts import CallTimeout

#: A context variable the caller sets: the function must see the caller's value.
request_id: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="unset")

#: The deadline of the timing cases, and the slack an answer gets on an idle machine (tests/support/calibration.py scales it).
DEADLINE = 0.2
IDLE_SLACK = 0.2


def spinning(caught, stopped=None):
    """A function stuck in a Python loop, noting the exception that stops it."""

    def inner(environ, start_response):
        try:
            while True:
                pass
        except CallTimeout as error:
            caught.append(error)
            raise
        finally:
            if stopped is not None:
                stopped.set()

    return inner


class LateBody:
    """What a function returns after its call timed out: a body holding something only close() frees."""

    def __init__(self, closed: threading.Event) -> None:
        self.closed = closed

    def __iter__(self):
        return iter([b"late"])

    def close(self) -> None:
        self.closed.set()


def returns_late(closed: threading.Event):
    """A function that waits until it is interrupted, swallows the interrupt and returns a body anyway."""

    def inner(environ, start_response):
        try:
            while True:
                time.sleep(0.01)  # blocked in C; the interrupt lands when each sleep returns
        except CallTimeout:
            pass  # exactly one interrupt comes per call: from here on the function runs undisturbed
        start_response("200 OK", [])
        return LateBody(closed)

    return inner


def overlapping(count: int):
    """A function that returns only once ``count`` calls are inside it at the same moment."""
    inside = threading.Barrier(count)

    def inner(environ, start_response):
        inside.wait(timeout=2)  # BrokenBarrierError (a 500 upstream) unless the calls overlap
        start_response("200 OK", [])
        return [b"together"]

    return inner
