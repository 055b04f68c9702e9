"""Whether anyone still waits for the call: ``sdk.cancelled()``.

A call is cancelled once its client has gone before the answer was complete
(cause ``client``), or once it ran past ``SERVER_CALL_TIMEOUT`` (cause
``timeout``). The layer gives each call a :class:`Cancellation` (in its
environ under :data:`~funcwsgi.environ.CANCELLATION_KEY`); ``sdk.cancelled()``
asks it. The server says whether the client is still connected
(:func:`funcwsgi.serving.client_connected`): for a call on a server thread, a
watcher thread asks every :data:`WATCH_INTERVAL` seconds while the function
runs, so a call whose client left is counted even when the function never
asks; ``cancelled()`` also asks at once. A call on the
event loop is told by the edge's ``http.disconnect`` (:func:`client_left`):
read for a plain ``async def`` function while it awaits
(:mod:`funcwsgi.eventloop.coroutines`), and seen when an ASGI app's own
``receive()`` returns it (:mod:`funcwsgi.compat.asgi_app`). A server that cannot
tell (it gives no :class:`~funcwsgi.serving.ServerCall`) cancels at the
timeout only. Cancelled calls are counted by cause in
``function_cancelled_total``.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable
from time import monotonic
from typing import TYPE_CHECKING, Any

from ..bodies import ClosingBody
from ..environ import CANCELLATION_KEY, FAILURE_KEY
from ..serving import SERVER_CALL_KEY, THREAD, ServerCall
from ..timeouts import Deadline

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

#: Seconds between two looks at the connections of the calls running on threads: how late a leave is noticed.
WATCH_INTERVAL = 0.2
CLIENT = "client"
TIMEOUT = "timeout"
CAUSES = (CLIENT, TIMEOUT)


#: One lock for every call's cause: a cause is set at most once per call, a lock per call would cost every call.
_cause_lock = threading.Lock()


class Cancellation:
    """One call's cancellation: its cause once cancelled."""

    __slots__ = ("cause", "deadline", "server_call")

    def __init__(self, deadline: Deadline | None = None, server_call: ServerCall | None = None) -> None:
        #: Why the call was cancelled (:data:`CLIENT`, :data:`TIMEOUT`), None while it is not.
        self.cause: str | None = None
        #: The call's deadline, whose decision the timeout layer shares (past it, the call answers 408); None: no deadline (any more).
        self.deadline = deadline
        #: The server's :class:`~funcwsgi.serving.ServerCall`, asked whether the client is still there; None: cannot tell.
        self.server_call = server_call

    def cancelled(self) -> bool:
        """Whether the call is cancelled, asking the server and the clock now."""
        if self.cause is None:
            server_call = self.server_call  # read once: a streamed answer's end lets go of it on another thread
            if server_call is not None and not server_call.client_connected():
                self.client_gone()
            else:
                deadline = self.deadline
                # Past the deadline, asking decides the call's answer is the 408: a function that stops
                # because it was told it timed out never gets its own answer out instead.
                if deadline is not None and deadline.expired_by_now():
                    self.cancel(TIMEOUT)
        return self.cause is not None

    def client_gone(self) -> None:
        """The client has left: cancelled for the timeout if the deadline has passed by now, else for the client."""
        # The deadline is asked after the client: the 408 may be what sent the client away (the timeout's
        # side decides before it answers), and then the timeout is the cause.
        deadline = self.deadline
        self.cancel(TIMEOUT if deadline is not None and deadline.expired_by_now() else CLIENT)

    def cancel(self, cause: str) -> None:
        with _cause_lock:  # the watcher and the call's thread may both see it: the first cause stays
            if self.cause is None:
                self.cause = cause


class Watcher:
    """A thread of the serving process asking the server, for each call on a thread, whether its client is there.

    Calls are added and removed without a lock (a set's add and discard are atomic in CPython,
    and copying it is too): about 1 µs per call less than a lock and a condition. The thread
    starts with the process's first watched call (a forked child starts its own: a fork has no
    threads) and looks every :data:`WATCH_INTERVAL` seconds.
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.after_fork()
        os.register_at_fork(after_in_child=self.after_fork)

    def after_fork(self) -> None:
        self.calls: set[Cancellation] = set()
        self.running = False

    def start(self) -> None:
        """Start the thread, once per process."""
        with self.lock:
            if not self.running:
                self.running = True
                threading.Thread(target=self.run, args=(self.calls,), name="funcwsgi-cancellation", daemon=True).start()

    def run(self, calls: set[Cancellation]) -> None:
        while True:
            time.sleep(WATCH_INTERVAL)
            for cancellation in list(calls):
                # A timed-out call's client, answered 408, leaves because of the timeout: cancelled() says so.
                cancellation.cancelled()


_watcher = Watcher()


class CancellationMiddleware:
    """Gives each call its :class:`Cancellation`; counts cancelled calls by cause in ``count(cause)``."""

    def __init__(self, app: WSGIApplication, *, seconds: float, count: Callable[[str], None] | None = None) -> None:
        self.app = app
        self.seconds = seconds
        self.count = count

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        deadline = None
        if self.seconds:
            # Made here, where the call is first seen; the timeout layer finds it on the cancellation.
            deadline = Deadline()  # deadline_in(), inlined: every call passes here
            deadline.at = monotonic() + self.seconds
        server_call: ServerCall | None = environ.get(SERVER_CALL_KEY)
        cancellation = environ[CANCELLATION_KEY] = Cancellation(deadline, server_call)
        watched = False
        if server_call is not None:
            if server_call.lent is THREAD:
                watched = True
                if not _watcher.running:
                    _watcher.start()
                _watcher.calls.add(cancellation)
        try:
            body = self.app(environ, start_response)
        except BaseException:
            self.ended(environ, cancellation, watched)
            raise
        if FAILURE_KEY in environ and environ[FAILURE_KEY] == TIMEOUT:  # the timeout layer's word: its 408 may have sent the client away
            cancellation.cancel(TIMEOUT)
        cancellation.deadline = None  # the timeout covers the call until the function returns, not the body's sending
        if type(body) is list:  # answered whole: nothing more of the call runs
            if watched or cancellation.cause is not None:  # else ended() has nothing to do (the timeout's word was read above)
                self.ended(environ, cancellation, watched)
            return body
        return WatchedBody(body, lambda: self.ended(environ, cancellation, watched), cancellation)

    def ended(self, environ: WSGIEnvironment, cancellation: Cancellation, watched: bool) -> None:
        if watched:
            _watcher.calls.discard(cancellation)
        if cancellation.cause is None and environ.get(FAILURE_KEY) == TIMEOUT:
            cancellation.cancel(TIMEOUT)
        if cancellation.cause is not None and self.count is not None:
            self.count(cancellation.cause)

    def __repr__(self) -> str:
        return "CancellationMiddleware()"


class WatchedBody(ClosingBody):
    """A streamed answer's body: once the function has produced all of it, a client that leaves cancels nothing.

    The server still sends the last piece and closes the body after that; a client that has it all may
    leave first, and the watcher, looking then, would count a complete answer as cancelled.
    """

    __slots__ = ("_cancellation",)

    def __init__(self, body: Iterable[bytes], on_close: Callable[[], None], cancellation: Cancellation) -> None:
        super().__init__(body, on_close)
        self._cancellation = cancellation

    def finished(self) -> None:
        self._cancellation.server_call = None


def client_left(environ: dict[str, Any] | None) -> None:
    """The server said the call's client is gone (an ASGI ``http.disconnect`` before the answer was complete)."""
    found = current(environ)
    if found is not None:
        found.client_gone()


def current(environ: dict[str, Any] | None) -> Cancellation | None:
    """The cancellation of the call ``environ`` belongs to, or None (outside a call, or without the layer)."""
    return None if environ is None else environ.get(CANCELLATION_KEY)
