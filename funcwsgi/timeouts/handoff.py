"""Timing a call on a pool thread while the server's thread waits for it.

For calls whose server cannot answer them while they run (no
:attr:`~funcwsgi.serving.ServerCall.answers_now`): the only way to answer on time when the function is
blocked inside C (``time.sleep``, a socket read) is for the thread that
answers to be another one than the function's. At the deadline the waiting
thread answers 408 and asks CPython to raise :class:`CallTimeout` in the
function's thread, which stops Python code at its next instruction
(blocking C calls at their return). The hand-off costs a few microseconds
of CPU and two thread switches per call; a server that can answer a call
at once avoids it (:mod:`funcwsgi.timeouts.watchdog`).

What the function sees is what it would see without a timeout:

- the call runs in a copy of the caller's :mod:`contextvars` context, so
  ``sdk.get_request()`` and the tracing context are those of the call
  (Kyma's thread-per-call runtime lost them, kyma#15758);
- pool threads are long-lived, like a server's own threads, so a function's
  thread-locals (a cached connection, a per-thread client) persist from call
  to call instead of being rebuilt each time.

The pool is bounded: a thread whose call timed out but is still stuck in C
stays counted until it returns, and new threads are made only up to
:attr:`CallThreads.limit`. When every thread is stuck, calls wait for one and
get 408 at their own deadline, and the layer's liveness check says so, so
``/healthz`` fails and the platform restarts the process.
"""

from __future__ import annotations

import contextvars
import logging
import os
import select
import sys
import threading
import time
from collections.abc import Callable, Iterable
from functools import partial
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from _typeshed.wsgi import InputStream, StartResponse, WSGIApplication, WSGIEnvironment

from . import CallTimeout, Deadline, Expired, cancel_interrupt, interrupt, renew_after_fork

log = logging.getLogger("funcwsgi.timeout")

class Doorbell:
    """One thread rings, another waits: the cheapest cross-thread wake-up available.

    An ``eventfd`` (a pipe where there is none) is rung and waited on with
    the GIL released around the system call, which is about twice as fast
    as a ``threading.Lock`` hand-off, where the woken thread must then also
    wait for the GIL.
    """

    __slots__ = ("_read_fd", "_write_fd", "_poll", "ring", "wait")

    #: Ring the bell (any thread).
    ring: Callable[[], object]
    #: Wait for a ring.
    wait: Callable[[], object]

    def __init__(self) -> None:
        if hasattr(os, "eventfd"):
            self._read_fd = self._write_fd = os.eventfd(0, getattr(os, "EFD_CLOEXEC", 0))
        else:  # pragma: no cover - platforms without eventfd
            self._read_fd, self._write_fd = os.pipe()
        self._poll = select.poll()
        self._poll.register(self._read_fd, select.POLLIN)
        # The system calls themselves, bound once: every call rings twice and waits once, and a
        # partial of a C function costs no Python frame where a method would.
        self.ring = partial(os.write, self._write_fd, _ONE)
        self.wait = partial(os.read, self._read_fd, 8)

    def __del__(self) -> None:
        os.close(self._read_fd)
        if self._write_fd != self._read_fd:  # pragma: no cover - the pipe fallback
            os.close(self._write_fd)

    def wait_ms(self, milliseconds: int) -> bool:
        """Wait at most ``milliseconds`` for a ring; True if it rang."""
        if self._poll.poll(milliseconds):
            os.read(self._read_fd, 8)
            return True
        return False


_LONGEST_POLL_MS = 2**31 - 1  # poll() takes a C int: about 24 days


def _milliseconds(seconds: float) -> int:
    return min(_LONGEST_POLL_MS, max(0, int(seconds * 1000 + 0.999)))


_ONE = (1).to_bytes(8, sys.byteorder)


class Call:
    """One call handed to a pool thread: its inputs, and what it produced.

    No ``__slots__`` and no ``__init__``: the class attributes below are the
    defaults, so making a call sets only its four inputs (where it is made:
    a Python ``__init__`` would cost every call a frame).
    """

    status: str | None = None
    headers: list[tuple[str, str]] = []
    exc_info: Any = None
    written: list[bytes] | None = None
    result: Iterable[bytes] | None = None
    error: BaseException | None = None
    finished = False
    abandoned = False
    #: Whether the function's answer goes out: its deadline's decision, taken when it returned.
    kept = True

    #: The waiting thread's own doorbell.
    done: Doorbell
    context: contextvars.Context
    app: WSGIApplication
    environ: WSGIEnvironment
    deadline: Deadline

    def start_response(self, status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Callable[[bytes], object]:
        # Recorded, and replayed by the server's thread only if the call ends in time.
        self.status, self.headers, self.exc_info = status, headers, exc_info
        return self.write

    def write(self, data: bytes) -> None:
        if self.written is None:
            self.written = []
        self.written.append(data)


class CallThread:
    """A long-lived pool thread that runs one call at a time."""

    def __init__(self, pool: CallThreads, number: int) -> None:
        self.pool = pool
        self.go = Doorbell()
        self.state = threading.Lock()  # orders "finished" against "abandoned"
        self.call: Call | None = None
        self.thread = threading.Thread(target=self.loop, name=f"funcwsgi-call-{number}", daemon=True)
        self.thread.start()

    def abandon(self, call: Call) -> bool:
        """Give up on ``call``; False if it finished after all (its doorbell rings soon)."""
        with self.state:
            if call.finished:
                return False
            call.deadline.expire()  # not finished: the function has not answered, nothing else can decide
            call.abandoned = True
            assert self.thread.ident is not None
            interrupt(self.thread.ident)
            self.pool.stuck_one()
        return True

    def loop(self) -> None:
        wait = self.go.wait
        while True:
            try:
                wait()
                call = self.call
                assert call is not None
                call.result = call.context.run(call.app, call.environ, call.start_response)
            except CallTimeout:
                pass
            except BaseException as error:  # handed to the waiting thread, which re-raises it
                assert self.call is not None
                self.call.error = error
                del error
            # At most one interrupt is ever sent per call, and settle() withdraws
            # it, so this retries at most once.
            while True:
                try:
                    self.settle()
                    break
                except CallTimeout:
                    continue

    def settle(self) -> None:
        """Hand the outcome to the waiting thread, or discard it if that thread gave up.

        The thread goes back to the pool before it rings, so the caller's next
        call finds it idle instead of making a new one.
        """
        call = self.call
        if call is None:
            return
        with self.state:
            call.finished = True
            abandoned = call.abandoned
            if not abandoned:
                call.kept = call.deadline.keep()
        if abandoned:
            # No new interrupt can come for this call now; drop one still pending.
            cancel_interrupt(threading.get_ident())
            self.call = None
            self.pool.unstuck_one()
            _discard(call)
            self.pool.release(self)
        else:
            self.call = None
            pool = self.pool
            pool.idle.append(self)  # pool.release(self), spelled out for every call's sake
            if pool.waiting:
                pool.wake_one()
            call.done.ring()


class CallInput:
    """The request body as the function reads it: closed to the function once its call is abandoned.

    After a 408 the server may read the rest of the body itself (to reuse
    the connection); a timed-out function that wakes up must not read from
    the same stream at the same time.
    """

    __slots__ = ("_stream", "_call")

    def __init__(self, stream: InputStream, call: Call) -> None:
        self._stream = stream
        self._call = call

    def _open(self) -> InputStream:
        if self._call.abandoned:
            raise CallTimeout("the call timed out; its request body is no longer readable")
        return self._stream

    def read(self, *args: Any) -> bytes:
        return self._open().read(*args)

    def readline(self, *args: Any) -> bytes:
        return self._open().readline(*args)

    def readlines(self, *args: Any) -> list[bytes]:
        return self._open().readlines(*args)

    def __iter__(self) -> Any:
        return iter(self._open())


def _discard(call: Call) -> None:
    """Close what an abandoned call returned late, so its resources are freed."""
    close = getattr(call.result, "close", None)
    if close is not None:
        try:
            close()
        except Exception:
            log.warning("Closing the late response of a timed-out call failed", exc_info=True)
    call.result = call.error = None


class CallThreads:
    """The pool: idle threads are reused; new ones are made up to ``limit``."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.idle: list[CallThread] = []
        self.count = 0
        self.stuck = 0
        self.waiting = 0
        self.changed = threading.Condition(threading.Lock())

    def acquire(self, timeout: float) -> CallThread | None:
        """An idle thread, a new one, or one that becomes idle within ``timeout``."""
        with self.changed:
            if self.count < self.limit and not self.idle:
                self.count += 1
                return CallThread(self, self.count)
            # Count ourselves as waiting *before* looking at the idle list again;
            # release() appends *before* looking at the count, so one of the two
            # always sees the other.
            self.waiting += 1
            try:
                deadline = time.monotonic() + timeout
                while True:
                    try:
                        return self.idle.pop()
                    except IndexError:
                        pass
                    left = deadline - time.monotonic()
                    if left <= 0:
                        return None
                    self.changed.wait(left)
            finally:
                self.waiting -= 1

    def release(self, worker: CallThread) -> None:
        self.idle.append(worker)
        if self.waiting:
            self.wake_one()

    def wake_one(self) -> None:
        """Wake one caller waiting in :meth:`acquire` (it appended itself to ``waiting`` first)."""
        with self.changed:
            self.changed.notify()

    def stuck_one(self) -> None:
        with self.changed:
            self.stuck += 1

    def unstuck_one(self) -> None:
        with self.changed:
            self.stuck -= 1

    def exhausted(self) -> bool:
        return self.stuck >= self.limit


class PooledCalls:
    """Runs each call on a pool thread and waits for it at most ``seconds``."""

    def __init__(self, app: WSGIApplication, *, seconds: float, max_threads: int) -> None:
        self.app = app
        self.seconds = seconds
        self.milliseconds = _milliseconds(seconds)
        self.max_threads = max_threads
        self.after_fork()
        renew_after_fork(self)

    def after_fork(self) -> None:
        """Start afresh: a forked child has none of its parent's threads, and must not share its doorbells."""
        self.pool = CallThreads(self.max_threads)
        self.doorbells = threading.local()  # each server thread waits on its own

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse, deadline: Deadline) -> Iterable[bytes]:
        """The call's response; :class:`Expired` when it did not come in time."""
        milliseconds = self.milliseconds  # from now: a little past the deadline, made a few layers out
        try:
            worker = self.pool.idle.pop()  # the common case: an idle thread, no lock
        except IndexError:
            found = self.pool.acquire(deadline.at - time.monotonic())
            if found is None:
                deadline.expire()  # the function never ran: nothing else can decide
                raise Expired("no call thread became free") from None
            worker = found
            milliseconds = _milliseconds(deadline.at - time.monotonic())
        try:
            done = self.doorbells.bell
        except AttributeError:
            done = self.doorbells.bell = Doorbell()
        call = Call()  # no __init__ (a frame per call): its four inputs are set here
        call.done = done
        call.context = contextvars.copy_context()
        call.app = self.app
        call.environ = environ
        call.deadline = deadline
        stream = None
        if environ.get("CONTENT_LENGTH") or environ.get("wsgi.input_terminated"):
            stream = environ["wsgi.input"]
            environ["wsgi.input"] = CallInput(stream, call)
        worker.call = call  # worker.start(call), spelled out for every call's sake
        worker.go.ring()
        if not done.wait_ms(milliseconds):
            if worker.abandon(call):
                raise Expired("the function did not return")
            done.wait()  # it finished just as the deadline passed
        if stream is not None:
            # Never abandoned, so never closed to the function; and left in, the guard would tie the
            # environ to the call and back, a cycle only the garbage collector frees.
            environ["wsgi.input"] = stream
        if not call.kept:  # it returned, but after its deadline (before this thread woke to see it)
            _discard(call)
            raise Expired("the function answered after its deadline")
        if call.error is not None:
            error, call.error = call.error, None
            try:
                raise error
            finally:
                del error
        assert call.status is not None, "the inner app returned without calling start_response"
        write = start_response(call.status, call.headers, call.exc_info) if call.exc_info else start_response(call.status, call.headers)
        result = call.result
        assert result is not None
        if call.written:
            for chunk in call.written:
                write(chunk)
        return result

    def liveness_problem(self) -> str | None:
        if self.pool.exhausted():
            return f"all {self.pool.limit} call threads are stuck in calls that timed out"
        return None
