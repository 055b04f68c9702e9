"""The same middleware stack on an event loop: each call runs in a greenlet that hands its waits to the loop.

The layers are written once, as WSGI layers: plain calls in, an iterable
out. On the event-loop path (:mod:`funcwsgi.eventloop.asgi`) each call runs the very
same stack inside a :class:`CallGreenlet`; whenever the stack has to wait
(for the request body, for the client to take a chunk, for the function's
coroutine), :func:`wait_for` switches back to the call's task with the
awaitable, the task awaits it on the loop, and switches back in with the
result. So the loop holds thousands of calls at once, each layer still reads
top to bottom, and a call does no more than a few greenlet switches (about a
microsecond each) more than on a server thread.

Context variables: servers run each ASGI call as a task of its own, with a
context of its own; the call's greenlet shares that context, and the task
awaits the function's coroutine in it, so ``sdk.get_request()``, the
tracing context and the log's call ids are those of the call, however many
calls interleave.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from greenlet import getcurrent, greenlet  # type: ignore[import-untyped]  # greenlet ships no type hints

T = TypeVar("T")


class CallGreenlet(greenlet):  # type: ignore[misc]
    """A long-lived greenlet that runs one call's stack at a time; its parent is the loop's thread.

    Kept and reused: making a greenlet costs tens of microseconds (its own
    Python frame stack), switching into one about one.
    """

    def __init__(self) -> None:
        super().__init__(self.serve_calls)
        # Started with no call: the arguments a greenlet starts with stay held as long as it lives, and an
        # idle one must keep nothing of its last call (its exchange, its connection, its request's body).
        self.switch()

    def serve_calls(self) -> None:
        outcome: Outcome | None = None
        while True:
            function, args = self.parent.switch(outcome)
            try:
                outcome = (function(*args), None)
            except BaseException as error:  # handed to the call's task, which raises it
                outcome = (None, error)
            del function, args


#: What a call's stack produced, (value, None) or (None, error): the greenlet hands a tuple, never
#: an awaitable, when it is done (a tuple is no awaitable, and cheaper to make than an object).
Outcome = tuple[Any, BaseException | None]


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


_idle: list[CallGreenlet] = []


async def run_bridged(function: Callable[..., T], *args: Any) -> T:
    """Run ``function(*args)`` (plain, blocking-looking code) in a greenlet, awaiting what it waits for."""
    call = _idle.pop() if _idle else CallGreenlet()
    # The call's greenlet shares its task's context (each call is a task of its own, with a context
    # of its own): what a layer sets, the function's coroutine, awaited by the task, sees.
    call.gr_context = getcurrent().gr_context
    value = call.switch(function, args)
    try:
        while type(value) is not tuple:
            try:
                result = await value
            except BaseException as error:  # the call's own code decides what to do with it
                value = call.throw(error)
            else:
                value = call.switch(result)
    finally:
        if type(value) is tuple and call:  # back at the top of its loop: reusable
            call.gr_context = None
            _idle.append(call)
    outcome, failure = value
    if failure is not None:
        raise failure
    return outcome  # type: ignore[no-any-return]
