"""Timing a coroutine on the event loop: at the deadline it is cancelled, not interrupted.

On the loop path the timeout layer only sets the call's deadline; the call's
task awaits the function's coroutine, and a sweep that looks at the calls
in flight every :data:`TICK` seconds cancels each call past its deadline:
the function sees :class:`asyncio.CancelledError` at the ``await`` it is
waiting in, its ``finally`` blocks and ``async with`` exits run, and the
layer answers 408. Nothing is left running: the coroutine was the call's
own task's. One sweep per loop, rather than a timer per call
(``asyncio.timeout``), because a timer costs more than the rest of a hello
world's call; the price is that the 408 comes up to :data:`TICK` seconds late.

A coroutine that catches the cancellation and carries on keeps its call
(and the client's answer) until it returns; it is logged by name.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import math
import time
from collections.abc import Awaitable
from typing import Any

from greenlet import getcurrent  # type: ignore[import-untyped]  # greenlet ships no type hints

from ..eventloop.bridge import CallGreenlet, wait_for
from . import Deadline, Expired

log = logging.getLogger("funcwsgi.timeout")

#: Seconds between two looks at the calls in flight: how late a 408 may be.
TICK = 0.02


class DeadlineSweep:
    """The calls in flight on one loop with their deadlines; cancels those past theirs."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        #: The calls in flight in the order of their deadlines: a look stops at the first not due, rather than
        #: copying and going through every call (at 400 in flight, a 50 ms wait, each call two or three
        #: times). A call is added here when its deadline is the latest yet.
        self.calls: dict[asyncio.Task[Any], Deadline] = {}
        #: The latest deadline in :attr:`calls`.
        self.latest = -math.inf
        #: The calls whose deadline came before the latest when they were added (their deadline made, then
        #: a wait, for a request's body, before they awaited): few, and looked at in full.
        self.early: dict[asyncio.Task[Any], Deadline] = {}
        self.expired: set[asyncio.Task[Any]] = set()
        self.scheduled = False
        self.context = contextvars.Context()

    def start(self) -> None:
        """Look at the calls in flight every TICK while there are any.

        In a context of the sweep's own: started from a call, the timer would keep a copy of that call's
        context (its environ, its objects) for as long as the sweep goes on.
        """
        self.scheduled = True
        self.loop.call_later(TICK, self.sweep, context=self.context)

    def sweep(self) -> None:
        now = time.monotonic()
        calls, early = self.calls, self.early
        due = []
        for task, deadline in calls.items():
            if deadline.at > now:
                break
            due.append((task, deadline))
        if early:
            due += [(task, deadline) for task, deadline in early.items() if deadline.at <= now]
        for task, deadline in due:
            if calls.pop(task, None) is None:
                del early[task]
            if deadline.expire():  # decided for the 408: the function's answer, should it still come, is dropped
                self.expired.add(task)
                task.cancel()
        if calls or early:
            self.loop.call_later(TICK, self.sweep, context=self.context)
        else:
            self.scheduled = False
            self.latest = -math.inf

    def was_expired(self, task: asyncio.Task[Any]) -> bool:
        """Whether the sweep cancelled ``task`` (forgetting it, and withdrawing the cancellation request)."""
        if task not in self.expired:
            return False
        self.expired.discard(task)
        task.uncancel()
        return True


_sweeps: dict[asyncio.AbstractEventLoop, DeadlineSweep] = {}


def wait_until_deadline(awaitable: Awaitable[Any], deadline: Deadline, name: str, task: asyncio.Task[Any] | None = None) -> Any:
    """From a call's greenlet: what ``awaitable`` gives, awaited by the call's task; :class:`Expired` when
    the task was cancelled at ``deadline``. ``task``: the call's task, when its server knows it (else asked for).

    The task is registered with the sweep and the cancellation told apart here, in the greenlet,
    rather than in a coroutine of its own wrapped around ``awaitable``: a frame less on every
    step the function's coroutine takes.
    """
    if task is None:
        task = asyncio.current_task()
        assert task is not None  # a call served on the loop is a task
    sweep = _sweeps.get(task.get_loop())
    if sweep is None:
        loop = task.get_loop()
        sweep = _sweeps[loop] = DeadlineSweep(loop)
    # Registered here, not through a method: this is every awaiting call's path.
    if deadline.at >= sweep.latest:  # the commonest: calls await in the order their deadlines were made
        calls = sweep.calls
        sweep.latest = deadline.at
    else:
        calls = sweep.early
    calls[task] = deadline
    if not sweep.scheduled:
        sweep.start()
    try:
        current = getcurrent()  # wait_for(), inlined on the call's greenlet (every awaiting call's path); it raises off it
        result = current.parent.switch(awaitable) if type(current) is CallGreenlet else wait_for(awaitable)
    except asyncio.CancelledError:
        if sweep.was_expired(task):
            raise Expired("the coroutine was cancelled at the deadline") from None
        raise
    finally:
        calls.pop(task, None)
    if sweep.expired and sweep.was_expired(task):
        log.warning("%s() was cancelled at its deadline but caught asyncio.CancelledError and returned late", name)
        raise Expired("the coroutine caught its cancellation and returned after the deadline")
    return result
