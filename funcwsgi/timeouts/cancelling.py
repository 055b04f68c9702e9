"""Timing a coroutine on the event loop: at the deadline it is cancelled, not interrupted.

On the loop path the timeout layer only sets the call's deadline; the call's
task awaits the function's coroutine under :func:`asyncio.timeout_at`, so at
the deadline the coroutine is cancelled: the function sees
:class:`asyncio.CancelledError` at the ``await`` it is waiting in, its
``finally`` blocks and ``async with`` exits run, and the layer answers 408.
Nothing is left running: the coroutine was the call's own task's. A
coroutine that catches the cancellation and carries on keeps its call (and
the client's answer) until it returns; it is logged by name.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Coroutine
from typing import Any

from . import Expired

log = logging.getLogger("funcwsgi.timeout")


async def until_deadline(coroutine: Coroutine[Any, Any, Any], deadline: float, name: str) -> Any:
    """What ``coroutine`` returns; :class:`Expired` when it was cancelled at ``deadline`` (a ``time.monotonic()``)."""
    loop = asyncio.get_running_loop()
    timeout = asyncio.timeout_at(loop.time() + (deadline - time.monotonic()))
    try:
        async with timeout:
            result = await coroutine
    except TimeoutError:
        if timeout.expired():
            raise Expired("the coroutine was cancelled at the deadline") from None
        raise
    if timeout.expired():
        log.warning("%s() was cancelled at its deadline but caught asyncio.CancelledError and returned late", name)
        raise Expired("the coroutine caught its cancellation and returned after the deadline")
    return result
