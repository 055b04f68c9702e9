"""Calling an ``async def`` function: awaited by the call's task on the loop path, else on a server thread's own loop.

Imported only for async functions: a sync function's server never loads
asyncio or greenlet.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

from ..current import current_environ
from ..environ import DEADLINE_KEY
from ..timeouts.cancelling import until_deadline
from .asgi import AsgiInput
from .bridge import on_loop_path, wait_for

_loops = threading.local()


def coroutine_caller(function: Callable[..., Any], name: str) -> Callable[..., Any]:
    """Call an ``async def`` function: awaited on the serving loop on the event-loop path, else
    run to completion on this server thread's own event loop."""

    def run(*args: Any) -> Any:
        if on_loop_path():
            return await_on_loop(function(*args), name)
        return run_on_thread_loop(function(*args))

    run.__name__ = getattr(function, "__name__", "run")
    return run


def run_on_thread_loop(coroutine: Any) -> Any:
    loop = getattr(_loops, "loop", None)
    if loop is None or loop.is_closed():
        loop = _loops.loop = asyncio.new_event_loop()
    return loop.run_until_complete(coroutine)


def await_on_loop(coroutine: Any, name: str) -> Any:
    """From the call's greenlet: the call's task awaits the coroutine, until the call's deadline."""
    environ = current_environ.get()
    deadline = None
    if environ is not None:
        # The coroutine runs outside the greenlet: it reads a body already read.
        stream = environ.get("wsgi.input")
        if type(stream) is AsgiInput:
            stream.preload()
        deadline = environ.get(DEADLINE_KEY)
    return wait_for(coroutine if deadline is None else until_deadline(coroutine, deadline, name))


def awaited(result: Any, name: str) -> Any:
    """What a coroutine a plain function returned produces (a callable that returns an awaitable)."""
    return await_on_loop(result, name) if on_loop_path() else run_on_thread_loop(result)
