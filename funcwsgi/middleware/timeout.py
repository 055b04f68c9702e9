"""The call timeout: after ``SERVER_CALL_TIMEOUT`` seconds the client gets 408.

The body is ``Timeout while processing the function``, what Kyma and
Kubeless answer, so existing clients keep working. How the call is timed
depends only on what its server gives it (:mod:`funcwsgi.serving`): on a
server thread whose call can be answered at once, it runs on that thread and
a watchdog answers for it at the deadline (:mod:`funcwsgi.timeouts.watchdog`);
otherwise it runs on a pool thread while the server's thread waits
(:mod:`funcwsgi.timeouts.handoff`). Either way the client is answered on
time even when the function is blocked inside C, the function gets
:class:`~funcwsgi.timeouts.CallTimeout` at its next Python instruction, and
the number of threads stays bounded. On a task of an event loop the
function's coroutine is cancelled at the deadline instead
(:mod:`funcwsgi.timeouts.cancelling`): it sees ``asyncio.CancelledError``.

Only the call is timed (until the function returns its response); a
streamed body is sent at the client's pace afterwards.

Every path shares one decision, the call's :class:`~funcwsgi.timeouts.Deadline`:
an answer the function gives before the deadline goes out; once the deadline
has passed the client gets the 408, even when the function answers a moment
later (it noticed ``sdk.cancelled()``, say) before the watchdog or the sweep
came round. The cancellation layer makes the deadline, on the call's
:class:`~funcwsgi.middleware.cancellation.Cancellation` (``sdk.cancelled()`` asks
the same one); without that layer, this one makes it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from ..environ import CANCELLATION_KEY, DEADLINE_KEY, FAILURE_KEY
from ..serving import SERVER_CALL_KEY, TASK, THREAD
from ..timeouts import TIMED_OUT, CallTimeout, Deadline, Expired, deadline_in, log_timeout
from ..timeouts.handoff import PooledCalls
from ..timeouts.watchdog import Watchdog

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

__all__ = ["TIMED_OUT", "CallTimeout", "TimeoutMiddleware"]

class TimeoutMiddleware:
    """Answers ``408 Timeout while processing the function`` when ``app`` takes longer than ``seconds``.

    ``max_threads`` bounds the threads that may be stuck in calls that timed
    out (the pool's threads, stuck ones included, on servers without a watchdog).
    """

    def __init__(self, app: WSGIApplication, *, seconds: float, max_threads: int) -> None:
        self.app = app
        self.seconds = seconds
        self.watchdog = Watchdog(seconds, max_threads)
        self.pooled = PooledCalls(app, seconds=seconds, max_threads=max_threads)
        # Its bound __call__: calling that is inlined, calling the object goes through its type's call slot.
        self.handed_off = self.pooled.__call__

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        cancellation = environ.get(CANCELLATION_KEY)
        deadline: Deadline | None = None if cancellation is None else cancellation.deadline
        if deadline is not None:  # the cancellation layer's, which found the server's call already
            call = cancellation.server_call  # type: ignore[union-attr]  # a deadline: there is a cancellation
        else:  # a stack without the cancellation layer
            deadline = deadline_in(self.seconds)
            call = environ.get(SERVER_CALL_KEY)
        try:
            if call is not None:
                lent = call.lent
                if lent is TASK:
                    # The function's task is cancelled at the deadline (timeouts.cancelling), which the loop's code
                    # finds in the environ; on a thread the deadline stays out of it (a key more can grow the dict).
                    environ[DEADLINE_KEY] = deadline
                    # A call on the loop, answered in time only if its answer is kept (the sweep may not have come round yet).
                    result = self.app(environ, start_response)
                    if deadline.keep():
                        return result
                    close = getattr(result, "close", None)
                    if close is not None:
                        close()
                    raise Expired("the function answered after its deadline", late=True)
                if lent is THREAD and call.answers_now:
                    return self.watchdog.run(self.app, environ, start_response, deadline)
            return self.handed_off(environ, start_response, deadline)
        except Expired as expired:
            return self.timed_out(environ, start_response, expired)

    def timed_out(self, environ: WSGIEnvironment, start_response: StartResponse, expired: Expired) -> Iterable[bytes]:
        environ[FAILURE_KEY] = "timeout"
        if not expired.answered:
            log_timeout(self.seconds, expired.why, environ)
        if not (expired.answered or expired.late):
            return TIMED_OUT(environ, start_response)
        # The function may have set a status before its answer was dropped: replace it (exc_info says so).
        raised_at = expired.__traceback__
        assert raised_at is not None  # it was raised and caught
        # Answered by the watchdog already, with this very reply: the server discards it (ServerCall.answer_now),
        # and the layers outside it (the access log, the metrics) count what the client got.
        return TIMED_OUT.answer(environ, start_response, exc_info=(Expired, expired, raised_at))

    def liveness_problem(self) -> str | None:
        """Why the process cannot serve calls any more, or None."""
        if self.watchdog.stuck >= self.watchdog.limit:
            return f"all {self.watchdog.limit} call threads are stuck in calls that timed out"
        return self.pooled.liveness_problem()

    def __repr__(self) -> str:
        return f"TimeoutMiddleware(seconds={self.seconds:g}, max_threads={self.pooled.max_threads})"
