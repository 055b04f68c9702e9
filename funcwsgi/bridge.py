"""The same middleware stack on an event loop: each call runs in a greenlet that hands its waits to the loop.

The layers are written once, as WSGI layers: plain calls in, an iterable
out. On the event-loop path (:mod:`funcwsgi.asgi`) each call runs the very
same stack inside a :class:`CallGreenlet`; whenever the stack has to wait
(for the request body, for the client to take a chunk, for the function's
coroutine), :func:`wait_for` switches back to the call's task with the
awaitable, the task awaits it on the loop, and switches back in with the
result. So the loop holds thousands of calls at once, each layer still reads
top to bottom, and a call does no more than a few greenlet switches (about a
microsecond each) more than on a server thread.

Context variables follow each greenlet: a call's greenlet starts with a copy
of its task's context, and the function's own task is started with a copy
of the greenlet's, so ``sdk.get_request()``, the tracing context and the
log's call ids are those of the call, however many calls interleave.
"""

from __future__ import annotations

import contextvars
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from greenlet import getcurrent, greenlet

T = TypeVar("T")


class CallGreenlet(greenlet):  # type: ignore[misc]
    """A greenlet that runs one call's stack; its parent is the call's task."""


class NotOnTheLoopPath(RuntimeError):
    """Waiting through the bridge outside a call it runs (a bug in funcwsgi, not in the function)."""


def on_loop_path() -> bool:
    """Whether the current code runs in a call the event-loop path serves."""
    return type(getcurrent()) is CallGreenlet


def wait_for(awaitable: Awaitable[T]) -> T:
    """Wait for ``awaitable`` on the loop, from the stack of a call the loop serves; its result, or its exception."""
    current = getcurrent()
    if type(current) is not CallGreenlet:
        raise NotOnTheLoopPath("wait_for() is only usable inside a call served on the event loop")
    return current.parent.switch(awaitable)  # type: ignore[no-any-return]


async def run_bridged(function: Callable[..., T], *args: Any) -> T:
    """Run ``function(*args)`` (plain, blocking-looking code) in a greenlet, awaiting what it waits for."""
    call = CallGreenlet(function)
    call.gr_context = contextvars.copy_context()
    value = call.switch(*args)
    while not call.dead:
        try:
            result = await value
        except BaseException as error:  # the call's own code decides what to do with it
            value = call.throw(error)
        else:
            value = call.switch(result)
    return value  # type: ignore[no-any-return]
