"""Calling an ``async def`` function: awaited by the call's task on the loop path, else on a server thread's own loop.

Imported only for async functions: a sync function's server never loads
asyncio or greenlet.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine, Generator
from typing import Any

from greenlet import getcurrent  # type: ignore[import-untyped]  # greenlet ships no type hints

from ..current import current_environ
from ..environ import ASGI_RECEIVE_KEY, DEADLINE_KEY
from ..middleware.cancellation import client_left
from ..serving import SERVER_CALL_KEY
from ..timeouts.cancelling import wait_until_deadline
from .asgi import AsgiInput
from .bridge import CallGreenlet, wait_for

_loops = threading.local()


class CoroutineAwaiter:
    """Awaits one function's coroutines: by the call's task on the event-loop path, else run to completion on this
    server thread's own event loop.

    While the function's coroutines return without waiting (a hello world, a cache hit), each runs in the
    call's greenlet at once, with no trip to the call's task and back. The first one that waits ends that
    for good: for a coroutine that waits, the first step taken here is extra work.
    """

    __slots__ = ("name", "at_once")

    def __init__(self, name: str, *, at_once: bool = True) -> None:
        self.name = name
        self.at_once = at_once

    def run(self, coroutine: Any, environ: dict[str, Any] | None) -> Any:
        """What ``coroutine`` returns: on the loop path, awaited by the call's task until the call's deadline
        (``environ``: the call's WSGI environ, or None: the current one)."""
        if type(getcurrent()) is not CallGreenlet:  # on_loop_path(), inlined: every call asks
            return run_on_thread_loop(coroutine)
        if self.at_once:
            try:
                pending = coroutine.send(None)
            except StopIteration as done:
                return done.value
            self.at_once = False
            coroutine = Resumed(coroutine, pending)
        # What follows is every awaiting call's path, in this one frame.
        if environ is None:
            environ = current_environ.get()
            if environ is None:
                return wait_for(coroutine)
        deadline = environ.get(DEADLINE_KEY)
        call = environ.get(SERVER_CALL_KEY)
        # A server that marks the call when its client leaves (``tells_when_gone``) is asked when the
        # function asks (sdk.cancelled()) and once it returns. Else the whole body is read, so the server's
        # next message is its word that the client left: a task of the call waits for it while the function awaits.
        told = getattr(call, "tells_when_gone", False)
        watch = None
        if not told:
            # The coroutine runs outside the greenlet: it reads a body already read (the ASGI side's; the edge's is whole).
            stream = environ.get("wsgi.input")
            if type(stream) is AsgiInput:
                stream.preload()
            receive = environ.get(ASGI_RECEIVE_KEY)
            if receive is not None:
                watch = asyncio.get_running_loop().create_task(watch_client(receive, environ))
        try:
            if deadline is None:
                return wait_for(coroutine)
            return wait_until_deadline(coroutine, deadline, self.name, getattr(call, "task", None))
        finally:
            if watch is not None:
                watch.cancel()
            elif told and not call.client_connected():  # type: ignore[union-attr]  # told: there is a call
                client_left(environ)


def coroutine_caller(function: Callable[..., Any], name: str) -> Callable[..., Any]:
    """Call an ``async def`` function and await its coroutine (:class:`CoroutineAwaiter`): for the other platforms'
    contracts, which call the function themselves. funcwsgi's own contract awaits the coroutine the function
    returns (:class:`funcwsgi.handler.calling.FunctionApp`), a frame less on every call."""
    awaiting = CoroutineAwaiter(name).run

    def run(*args: Any) -> Any:
        return awaiting(function(*args), None)

    run.__name__ = getattr(function, "__name__", "run")
    return run


def run_on_thread_loop(coroutine: Any) -> Any:
    loop = getattr(_loops, "loop", None)
    if loop is None or loop.is_closed():
        loop = _loops.loop = asyncio.new_event_loop()
    return loop.run_until_complete(coroutine)


async def watch_client(receive: Callable[[], Any], environ: dict[str, Any]) -> None:
    """Marks the call cancelled when the server says ``http.disconnect`` (the empty body message of a
    request without a body comes first; never more than one: a loop here could spin on a receive that never waits)."""
    message = await receive()
    if message.get("type") == "http.request":
        message = await receive()
    if message.get("type") != "http.disconnect":
        return
    call = environ.get(SERVER_CALL_KEY)
    if call is not None:
        call.gone = True
    client_left(environ)


class Resumed:
    """A coroutine whose first step has run, awaited from where it stopped: what it waits for first, then the rest."""

    __slots__ = ("coroutine", "pending")

    def __init__(self, coroutine: Coroutine[Any, Any, Any], pending: Any) -> None:
        self.coroutine = coroutine
        self.pending = pending

    def __await__(self) -> Generator[Any, None, Any]:
        coroutine = self.coroutine
        try:
            yield self.pending  # the task waits for it as if the coroutine itself had yielded it
        except BaseException as error:  # a cancellation, say: the function sees it at its await
            try:
                pending = coroutine.throw(error)
            except StopIteration as done:
                return done.value
            return (yield from Resumed(coroutine, pending).__await__())
        return (yield from coroutine.__await__())


def awaited(result: Any, name: str) -> Any:
    """What a coroutine produces, awaited once as a call's would be (a probe's async hook): by the call's task on the
    event-loop path, until the current call's deadline, else on this server thread's own loop."""
    return CoroutineAwaiter(name, at_once=False).run(result, None)
