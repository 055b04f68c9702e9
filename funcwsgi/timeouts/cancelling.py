"""Timing a coroutine on the event loop: at the deadline it is cancelled, not interrupted.

On the loop path the timeout layer only sets the call's deadline; the
function's coroutine runs as a task of its own, and at the deadline the task
is cancelled (the function sees :class:`asyncio.CancelledError` at the
``await`` it is waiting in, and its ``finally`` blocks and ``async with``
exits run). The layer then answers 408 at once. A coroutine that swallows
the cancellation and keeps running is logged by name; it cannot hold the
client's answer back by more than :data:`CANCEL_GRACE` seconds.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from . import Expired

log = logging.getLogger("funcwsgi.timeout")

#: How long a cancelled coroutine gets to finish (its finally blocks) before the 408 goes out anyway.
CANCEL_GRACE = 0.05


async def until_deadline(task: asyncio.Task[Any], deadline: float | None, name: str) -> Any:
    """The task's result; :class:`Expired` once ``deadline`` (a ``time.monotonic()``) passed and the task was cancelled."""
    try:
        if deadline is None:
            return await task  # cancelling the call cancels the task too
        loop = asyncio.get_running_loop()
        woken = loop.create_future()

        def wake(_: object = None) -> None:
            if not woken.done():
                woken.set_result(None)

        task.add_done_callback(wake)
        timer = loop.call_at(loop.time() + (deadline - time.monotonic()), wake)
        try:
            await woken
        finally:
            timer.cancel()
    except asyncio.CancelledError:
        # The call itself was cancelled (the server stopping, the client gone): so is the function.
        task.cancel()
        raise
    if task.done():
        return task.result()
    task.cancel()
    await asyncio.wait({task}, timeout=CANCEL_GRACE)
    if not task.done():
        log.warning("%s() was cancelled at its deadline but keeps running: it caught asyncio.CancelledError and did not re-raise it", name)
    elif not task.cancelled() and task.exception() is not None:
        log.warning("%s() raised while being cancelled at its deadline", name, exc_info=task.exception())
    raise Expired("the coroutine was cancelled at the deadline")
