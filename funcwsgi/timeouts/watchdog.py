"""Timing a call on the server's own thread: no hand-off, no thread switch.

Handing every call to another thread (:mod:`funcwsgi.timeouts.handoff`)
costs two thread switches per call, which over HTTP is most of what the
runtime adds to a hello world. A server whose call can be answered at once
(:attr:`funcwsgi.serving.ServerCall.answers_now`) lets the runtime avoid
it: the call runs on the server's own thread while one watchdog thread per
process looks at the deadlines a few times a second. When a call passes its
deadline the watchdog

1. answers ``408 Timeout while processing the function`` (with
   ``Connection: close``) through the call's
   :meth:`~funcwsgi.serving.ServerCall.answer_now`, so the client is
   answered on time even when the function is blocked inside C
   (``time.sleep``, a socket read), and
2. asks CPython to raise :class:`~funcwsgi.timeouts.CallTimeout` in the
   function's thread, which stops Python code at its next instruction.

When the function's thread comes back, its late response is discarded by
the server. Until then the thread is stuck; the server is told
(:meth:`~funcwsgi.serving.ServerCall.thread_stuck`) to keep one more thread
for each stuck one (up to ``limit``), so it keeps its full number of
threads for other calls. When ``limit`` threads are stuck, new calls wait
for one to come back and get 408 at their own deadline, and the liveness
check fails so the platform restarts the process.

Per call the happy path costs a dict insert, a dict pop and the call's
:class:`~funcwsgi.timeouts.Deadline` decided: the deadline decides which answer
goes out (the function's, taken before it, or the 408), and which of the
function's thread and the watchdog takes a timed-out call out of ``active``
first decides which of them sends the 408. A function that answers just past
its deadline, before the watchdog's next look (it saw ``sdk.cancelled()``),
gets its 408 from its own thread, through the layer.
"""

from __future__ import annotations

import logging
import threading
import time
import weakref
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from ..environ import REQUEST_ID_KEY
from ..serving import SERVER_CALL_KEY
from . import TIMED_OUT, CallTimeout, Deadline, Expired, cancel_interrupt, interrupt, log_timeout, renew_after_fork

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

log = logging.getLogger("funcwsgi.timeout")

#: How often the watchdog looks at the deadlines: a 408 leaves at most this late.
TICK_SECONDS = 0.05

def _answer(head_only: bool, request_id: str | None) -> tuple[str, list[tuple[str, str]], bytes]:
    """The layer's 408 for the watchdog to answer itself; the connection then closes."""
    headers = [*TIMED_OUT.headers, ("Connection", "close")]
    if request_id is not None:
        headers.append(("X-Request-Id", request_id))
    return TIMED_OUT.status, headers, b"" if head_only else TIMED_OUT.body


def stuck_calls() -> int:
    """Calls of this process answered with 408 whose thread has not come back."""
    return sum(watchdog.stuck for watchdog in list(_instances))


_instances: weakref.WeakSet[Watchdog] = weakref.WeakSet()


class TimedCall:
    """One call being timed: when it must end, and how to answer its client if it does not.

    No ``__init__`` and no ``__slots__``: the class attributes are the defaults, and
    :meth:`Watchdog.run` sets the call's own (a Python ``__init__`` would cost every call a frame).
    """

    deadline: Deadline
    #: The function's thread, which the watchdog interrupts.
    thread: int
    environ: WSGIEnvironment
    start_response: StartResponse
    #: The watchdog's calls: whichever of the function's thread and the watchdog pops a timed-out call first answers it.
    active: dict[TimedCall, TimedCall]
    #: Set by the watchdog once it answered and interrupted.
    answered = False
    timed = True
    #: Whether the function's answer goes out (the deadline's decision, taken when it answered).
    in_time = True
    #: Whether the function's thread took the call out of ``active`` (else the watchdog did, and answers the 408).
    mine = True

    def finish(self) -> bool:
        """Stop timing the call (on the function's thread): whether the function's answer goes out."""
        if self.timed:
            # In this order: the watchdog pops only a call whose deadline expired, so a kept call is
            # always this thread's. An interrupt (it comes only after the watchdog popped the call)
            # that lands between the lines leaves `timed` set, and a retry gets the same answers.
            self.in_time = self.deadline.keep()
            self.mine = self.active.pop(self, None) is not None
            self.timed = False
        return self.in_time

    def start_timed_response(self, status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Callable[[bytes], object]:
        write = self.start_response(status, headers, exc_info) if exc_info else self.start_response(status, headers)
        finish = self.finish

        def write_untimed(data: bytes) -> object:
            # write() sends the status line: from then on the body goes at the client's
            # pace, as a streamed body does, and the watchdog must not answer any more.
            if not finish():  # past the deadline: stop the function as the watchdog's interrupt would
                raise CallTimeout("the call timed out before its first write")
            return write(data)

        return write_untimed


class Watchdog:
    """The deadlines of the calls running on this process's server threads."""

    def __init__(self, seconds: float, limit: int) -> None:
        self.seconds = seconds
        self.limit = limit
        self.after_fork()
        renew_after_fork(self)
        _instances.add(self)

    def after_fork(self) -> None:
        """Start afresh: a forked child has neither the parent's watchdog thread nor its calls."""
        self.active: dict[TimedCall, TimedCall] = {}
        self.stuck = 0
        self.changed = threading.Condition(threading.Lock())
        self.thread: threading.Thread | None = None

    def run(self, app: WSGIApplication, environ: WSGIEnvironment, start_response: StartResponse, deadline: Deadline) -> Iterable[bytes]:
        """The call's response; :class:`Expired` when the 408 goes out instead (answered by the watchdog, or owed by the layer)."""
        if self.thread is None:
            self._start()
        if self.stuck >= self.limit:
            self._wait_for_a_thread(deadline)
        call = TimedCall()
        call.deadline = deadline
        call.thread = threading.get_ident()
        call.environ = environ
        call.start_response = start_response
        call.active = self.active
        self.active[call] = call
        result: Iterable[bytes] | None = None
        error: BaseException | None = None
        try:
            result = app(environ, call.start_timed_response)
        except BaseException as raised:  # the function's, or the watchdog's interrupt
            error = raised
        while True:
            try:
                in_time = call.finish()
                break
            except CallTimeout:  # the watchdog took the call just now
                continue
        if in_time:
            if error is not None:
                try:
                    raise error  # the function's own (a CallTimeout it raised itself included)
                finally:
                    del error
            assert result is not None
            return result
        error = None
        if call.mine:  # past its deadline before the watchdog came round: the layer answers the 408
            close = getattr(result, "close", None)
            if close is not None:
                close()
            raise Expired("the function answered after its deadline", late=True)
        self._came_back(call)
        close = getattr(result, "close", None)
        if close is not None:
            close()
        raise Expired("the function did not return", answered=True)

    def _wait_for_a_thread(self, deadline: Deadline) -> None:
        with self.changed:
            while self.stuck >= self.limit:
                left = deadline.at - time.monotonic()
                if left <= 0:
                    deadline.expire()  # the function never ran: nothing else can decide
                    raise Expired("every call thread is stuck")
                self.changed.wait(left)

    def _came_back(self, call: TimedCall) -> None:
        """The thread of a call the watchdog answered is back: withdraw its interrupt, free its place."""
        while True:
            try:
                while not call.answered:  # the watchdog interrupts right after it answers
                    time.sleep(0.001)
                # At most one interrupt is sent per call, before `answered` is set:
                # once it is withdrawn (or raised and caught here) none can follow.
                cancel_interrupt(call.thread)
                break
            except CallTimeout:
                continue
        with self.changed:
            self.stuck -= 1
            extra_threads = min(self.stuck, self.limit)
            self.changed.notify()
        call.environ[SERVER_CALL_KEY].thread_back(extra_threads)

    def _start(self) -> None:
        with self.changed:
            if self.thread is not None:
                return
            self.thread = threading.Thread(target=self._watch, name="funcwsgi-watchdog", daemon=True)
            self.thread.start()

    def _watch(self) -> None:
        active = self.active
        while True:
            time.sleep(TICK_SECONDS)
            now = time.monotonic()
            self.looked(now)
            for call in active.copy():  # one C call: atomic against the server threads
                # Decided first, popped second: a call whose function answered in time is never taken.
                if call.deadline.at <= now and call.deadline.expire() and active.pop(call, None) is not None:
                    try:
                        self._answer_and_interrupt(call)
                    except Exception:  # the watchdog must outlive any one call
                        log.exception("Answering a call that timed out failed")

    def looked(self, now: float) -> None:
        """The watchdog looked at the deadlines at ``now`` (``time.monotonic()``); nothing by default.

        A seam for tests: they judge a 408's lateness in looks (answered at the
        first look past the deadline), which a busy machine cannot stretch.
        """

    def _answer_and_interrupt(self, call: TimedCall) -> None:
        environ = call.environ
        server_call = environ[SERVER_CALL_KEY]
        with self.changed:
            self.stuck += 1
            # Two calls can both start while one place is left, and both get stuck:
            # the server never gets more than `limit` extra threads.
            extra_threads = min(self.stuck, self.limit)
        try:
            server_call.thread_stuck(extra_threads)
            log_timeout(self.seconds, "the function did not return", environ)
            try:
                server_call.answer_now(*_answer(environ.get("REQUEST_METHOD") == "HEAD", environ.get(REQUEST_ID_KEY)))
            except (OSError, ValueError) as error:
                log.info("The client of a timed-out call could not be answered: %s", error)
        finally:
            interrupt(call.thread)
            call.answered = True
