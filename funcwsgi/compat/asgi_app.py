"""An ASGI app as the function, ``async def handle(scope, receive, send)``: the runtime's one ASGI bridge.

Knative func-python's functions (:mod:`.knative`) and a plain module-level
``handle(scope, receive, send)`` both come through here. The app runs inside
the stack like any function: the layers see its call, its status and its
body. It gets the call's ASGI scope (on the event-loop path the server's
own, else one made from the WSGI environ), the request body as one
``http.request`` message (read through ``wsgi.input``, so the body limit
holds), and what it sends becomes the response, streamed: each
``http.response.body`` chunk reaches the server as it is sent.

Each call runs the app as a task of its own, :class:`AppCall`; the stack
takes its messages one at a time from the outbox that ``send`` fills, and
``send`` waits when the stack is :data:`BACKLOG` messages behind (the
client's pace holds the app back). Where the task runs:

- on the event-loop path, on the serving loop itself: the stack's greenlet
  waits through :func:`~funcwsgi.eventloop.bridge.wait_for`, and the wait
  for the response to start is timed by the call's deadline, so the
  timeout cancels the app's task (it sees ``asyncio.CancelledError``) and
  the layer answers 408;
- on server threads (``SERVER_EVENT_LOOP=off``, the WSGI-only servers, the
  Kafka trigger), on one event loop per process in a thread of its own: a
  body may be taken on another thread than the one that started the call
  (the pooled timeout hands the body back to the server's thread). The
  timeout layer interrupts the waiting thread, which cancels the task.

Only the wait for ``http.response.start`` is timed, as Knative's
``timeoutSeconds`` times a revision's answer until its first byte; a body
is then streamed at the app's and the client's pace. After the request body,
``receive()`` is the server's own on the loop path (``http.disconnect`` when
the client has gone, as under uvicorn), and on threads answers
``http.disconnect`` once the response is over (the stack closed it: sent, or
the client went away).
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import os
import sys
import threading
from collections import deque
from collections.abc import Awaitable, Callable, Iterator
from concurrent.futures import TimeoutError as FutureTimeout
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from ..current import current_environ
from ..environ import ASGI_RECEIVE_KEY, ASGI_SCOPE_KEY, DEADLINE_KEY
from ..eventloop.bridge import on_loop_path, wait_for
from ..middleware.cancellation import client_left
from ..replies import status_line
from ..request import read_body
from ..timeouts.cancelling import wait_until_deadline
from .wsgi_text import utf8

if TYPE_CHECKING:
    from collections.abc import Coroutine

    from _typeshed.wsgi import StartResponse, WSGIEnvironment

    from ..handler.loader import LoadedFunction
    from ..handler.signatures import Invoker
    from ..timeouts import Deadline

log = logging.getLogger("funcwsgi.asgi")

Message = dict[str, Any]

#: Messages the app may send ahead of the stack before its ``send`` waits for the stack to take them.
BACKLOG = 8
#: Whether asyncio can start a task eagerly (``eager_start``, Python 3.12+).
EAGER = sys.version_info >= (3, 12)
#: Seconds a server thread waits on the app's loop at a time, so the call timeout's interrupt reaches it soon.
THREAD_POLL = 0.05


def scope_of(environ: dict[str, Any]) -> dict[str, Any]:
    """The call's ASGI HTTP scope: a copy of the server's own on the loop path, else one made from the WSGI environ."""
    scope = environ.get(ASGI_SCOPE_KEY)
    if scope is not None:
        return dict(scope)
    headers = [
        (key[5:].replace("_", "-").lower().encode("latin-1"), str(value).encode("latin-1"))
        for key, value in environ.items()
        if key.startswith("HTTP_")
    ]
    for key, name in (("CONTENT_TYPE", b"content-type"), ("CONTENT_LENGTH", b"content-length")):
        if environ.get(key):
            headers.append((name, environ[key].encode("latin-1")))
    # PEP 3333's PATH_INFO is already percent-decoded, as latin-1; ASGI's path is the same, as UTF-8.
    path = environ.get("PATH_INFO", "") or "/"
    raw = environ.get("RAW_URI") or environ.get("REQUEST_URI")
    server_port = str(environ.get("SERVER_PORT") or "")
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": environ.get("SERVER_PROTOCOL", "HTTP/1.1").partition("/")[2] or "1.1",
        "method": environ.get("REQUEST_METHOD", "GET"),
        "scheme": environ.get("wsgi.url_scheme", "http"),
        "path": utf8(path),
        "raw_path": str(raw).partition("?")[0].encode("latin-1") if raw else quote(path, safe="/:@!$&'()*+,;=").encode("latin-1"),
        "query_string": environ.get("QUERY_STRING", "").encode("latin-1"),
        "root_path": environ.get("SCRIPT_NAME", ""),
        "headers": headers,
        "client": (environ.get("REMOTE_ADDR", ""), int(environ.get("REMOTE_PORT") or 0)),
        "server": (environ.get("SERVER_NAME", ""), int(server_port) if server_port.isdigit() else None),
        "state": {},
    }


class AppCall:
    """One call of an ASGI app: its task, its outbox, and, as a WSGI app, the response it sends.

    The coroutine methods run on the app's loop, so the outbox is only ever
    touched from that loop's thread; the stack reaches them through its
    :class:`_Side`.
    """

    __slots__ = (
        "app", "name", "scope", "body", "server_receive", "send", "context",
        "pending", "task", "arrived", "room", "over", "abandoned", "complete",
    )

    def __init__(
        self,
        app: Callable[..., Any],
        name: str,
        scope: dict[str, Any],
        body: bytes,
        sender: Callable[[Callable[[Message], Any]], Callable[..., Any]] | None = None,
        server_receive: Callable[[], Awaitable[Message]] | None = None,
    ) -> None:
        self.app = app
        self.name = name
        self.scope = scope
        self.body: bytes | None = body
        self.server_receive = server_receive
        self.send: Callable[..., Any] = self.put if sender is None else sender(self.put)
        self.context = contextvars.copy_context()  # the call's: sdk.get_request(), the trace, the log's ids
        self.pending: deque[Message] = deque()
        self.task: asyncio.Task[Any] | None = None
        self.arrived: asyncio.Future[None] | None = None  # the stack waits for a message
        self.room: asyncio.Future[None] | None = None  # the app waits for the stack to catch up
        self.over: asyncio.Event | None = None  # the response is over: receive() says http.disconnect
        self.abandoned = False
        self.complete = False

    # -- on the app's loop ------------------------------------------------------------

    async def receive(self) -> Message:
        if self.body is not None:
            body, self.body = self.body, None
            return {"type": "http.request", "body": body, "more_body": False}
        if self.server_receive is not None:  # on the loop: the server's own word (http.disconnect when the client leaves)
            while True:
                message = await self.server_receive()
                # The body went through wsgi.input already; what the server still has of it (the
                # empty message of a request without a body) is not the app's.
                if message.get("type") != "http.request":
                    if message.get("type") == "http.disconnect" and not self.complete:
                        # The app reads receive() itself, so its messages are never taken from it:
                        # its own http.disconnect before its answer was complete is what cancels the call.
                        client_left(current_environ.get())
                    return message
        if self.over is None:
            self.over = asyncio.Event()
        await self.over.wait()
        return {"type": "http.disconnect"}

    async def put(self, message: Message) -> None:
        """The app's ``send``."""
        if self.complete:
            return  # what servers do with messages after the response (the client has what it gets)
        self.pending.append(message)
        self._wake()
        if len(self.pending) > BACKLOG:
            self.room = asyncio.get_running_loop().create_future()
            await self.room

    def _wake(self) -> None:
        if self.arrived is not None and not self.arrived.done():
            self.arrived.set_result(None)

    def _make_room(self) -> None:
        if self.room is not None and not self.room.done() and len(self.pending) <= BACKLOG:
            self.room.set_result(None)

    async def _next(self) -> Message | None:
        """The next message the app sent; ``None`` once its task has ended without another."""
        while not self.pending:
            assert self.task is not None
            if self.task.done():
                return None
            self.arrived = asyncio.get_running_loop().create_future()
            await self.arrived
        message = self.pending.popleft()
        self._make_room()
        return message

    async def begin(self) -> tuple[Message, bytes | None]:
        """Start the app; its ``http.response.start``, with the whole body when the app has sent all of it already."""
        try:
            if self.abandoned:  # a server thread gave up on the call before the loop got here
                raise asyncio.CancelledError
            self.task = task = _start_task(self.app(self.scope, self.receive, self.send), self.context)
            if not task.done():  # started eagerly, an app that answers at once is done already: nothing to wake
                task.add_done_callback(self._ended)
            start = await self._next()
            if start is None:
                self.task.result()  # the app's own exception, for the errors layer's plain 500
                raise RuntimeError(f"{self.name}() returned without sending http.response.start")
            if start.get("type") != "http.response.start":
                raise RuntimeError(f"{self.name}() sent {start.get('type')!r} before http.response.start")
        except BaseException:
            await self.abandon()
            raise
        chunks = []
        for message in self.pending:
            if message.get("type") == "http.response.body":
                chunks.append(bytes(message.get("body", b"")))
                if not message.get("more_body", False):
                    self.pending.clear()
                    self._make_room()
                    self._finish()
                    if task.done():
                        self._ended(task)
                    return start, b"".join(chunks)
        return start, None

    async def next_chunk(self) -> bytes | None:
        """The next piece of the body; ``None`` after the last one."""
        while not self.complete:
            message = await self._next()
            if message is None:
                assert self.task is not None
                self.task.result()  # a failure after the response started: the server drops the connection
                raise RuntimeError(f"{self.name}() returned before finishing its response (more_body was still true)")
            if message.get("type") != "http.response.body":
                continue  # trailers and extensions: not passed on
            chunk = bytes(message.get("body", b""))
            if not message.get("more_body", False):
                self._finish()
                if chunk:
                    return chunk
                return None
            if chunk:
                return chunk
        return None

    async def abandon(self) -> None:
        """Cancel the app's task and wait for it to end (its ``finally`` blocks run), unless it ended already."""
        self.abandoned = True
        self._finish()
        task = self.task
        if task is not None and not task.done():
            task.cancel()
            await asyncio.wait([task])

    def abandon_soon(self) -> None:
        """From the loop's thread, without waiting: what a server thread that was interrupted asks for."""
        self.abandoned = True
        self._finish()
        if self.task is not None:
            self.task.cancel()

    def _finish(self) -> None:
        self.complete = True
        if self.over is not None:
            self.over.set()
        if self.room is not None and not self.room.done():
            self.room.set_result(None)

    def _ended(self, task: asyncio.Task[Any]) -> None:
        self._wake()
        # Retrieved here (asyncio warns of exceptions never retrieved); the stack raises those of an unfinished response.
        error = None if task.cancelled() else task.exception()
        if error is not None and self.complete and not self.abandoned:
            log.error("%s() failed after its response was sent", self.name, exc_info=error)

    # -- in the stack ------------------------------------------------------------------

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Any:
        side = ON_THE_LOOP if on_loop_path() else ON_A_THREAD
        deadline = environ.get(DEADLINE_KEY)
        start, whole = side.begin(self, deadline)
        headers = [(bytes(name).decode("latin-1"), bytes(value).decode("latin-1")) for name, value in start.get("headers", ())]
        if whole is not None:
            if environ.get("REQUEST_METHOD") != "HEAD" and not any(name.lower() == "content-length" for name, _ in headers):
                headers.append(("Content-Length", str(len(whole))))
            start_response(status_line(int(start.get("status", 200))), headers)
            return [whole]
        start_response(status_line(int(start.get("status", 200))), headers)
        return _Stream(self, side)


def _start_task(coroutine: Coroutine[Any, Any, Any], context: contextvars.Context) -> asyncio.Task[Any]:
    """The app's task, run at once up to its first real wait where asyncio can (3.12+): an app that
    answers without waiting has answered before the loop turns, as if it were awaited in place."""
    loop = asyncio.get_running_loop()
    if EAGER:
        return asyncio.Task(coroutine, loop=loop, context=context, eager_start=True)  # type: ignore[call-arg,unused-ignore]
    return loop.create_task(coroutine, context=context)


class _Stream:
    """A body whose chunks the app sends as the server takes them; closing it early cancels the app."""

    __slots__ = ("call", "side", "done")

    def __init__(self, call: AppCall, side: _Side) -> None:
        self.call = call
        self.side = side
        self.done = False

    def __iter__(self) -> Iterator[bytes]:
        return self

    def __next__(self) -> bytes:
        if self.done:
            raise StopIteration
        try:
            chunk: bytes | None = self.side.wait(self.call, self.call.next_chunk())
        except BaseException:
            self.done = True
            raise
        if chunk is None:
            self.done = True
            raise StopIteration
        return chunk

    def close(self) -> None:
        # The server closes the body when it is sent, when the client went away, or when it failed;
        # an app still sending has nobody to send to. What it does after its last message is its own.
        if not self.call.complete:
            self.side.wait(self.call, self.call.abandon())
        self.done = True


# -- where the app's task runs ---------------------------------------------------------------


class _Side:
    def begin(self, call: AppCall, deadline: Deadline | None) -> tuple[Message, bytes | None]:
        raise NotImplementedError

    def wait(self, call: AppCall, coroutine: Coroutine[Any, Any, Any]) -> Any:
        raise NotImplementedError


class _OnTheLoop(_Side):
    """The call is served on the event loop: the app's task runs there, the call's task awaits for the stack."""

    def begin(self, call: AppCall, deadline: Deadline | None) -> tuple[Message, bytes | None]:
        began = call.begin()
        started: tuple[Message, bytes | None] = wait_for(began) if deadline is None else wait_until_deadline(began, deadline, call.name)
        return started

    def wait(self, call: AppCall, coroutine: Coroutine[Any, Any, Any]) -> Any:
        return wait_for(coroutine)


class _OnAThread(_Side):
    """The call is served on a server thread: the app's task runs on the process's ASGI loop, in a thread of its own."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pid = 0

    def loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None or self._pid != os.getpid():  # a forked worker makes its own
            with self._lock:
                if self._loop is None or self._pid != os.getpid():
                    loop = asyncio.new_event_loop()
                    threading.Thread(target=loop.run_forever, name="funcwsgi-asgi-loop", daemon=True).start()
                    self._loop, self._pid = loop, os.getpid()
        return self._loop

    def begin(self, call: AppCall, deadline: Deadline | None) -> tuple[Message, bytes | None]:
        return self.wait(call, call.begin())  # type: ignore[no-any-return]  # timed by the timeout layer's interrupt

    def wait(self, call: AppCall, coroutine: Coroutine[Any, Any, Any]) -> Any:
        loop = self.loop()
        try:
            future = asyncio.run_coroutine_threadsafe(coroutine, loop)
            while True:
                try:
                    return future.result(THREAD_POLL)
                except FutureTimeout:
                    continue
        except BaseException:
            # The call timeout's interrupt, or the app's own failure: the app's task must not outlive the call.
            loop.call_soon_threadsafe(call.abandon_soon)
            raise


ON_THE_LOOP = _OnTheLoop()
ON_A_THREAD = _OnAThread()


def invoker(loaded: LoadedFunction) -> Invoker[None]:
    """Each call runs the app as a task of its own; the response is what it sends, streamed."""
    app: Callable[..., Any] = loaded.function
    name = loaded.name

    def call_asgi(environ: dict[str, Any]) -> tuple[Any, None]:
        return AppCall(app, name, scope_of(environ), read_body(environ), server_receive=environ.get(ASGI_RECEIVE_KEY)), None

    return call_asgi
