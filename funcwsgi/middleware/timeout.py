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
"""

from __future__ import annotations

from collections.abc import Iterable
from time import monotonic
from typing import TYPE_CHECKING

from ..environ import DEADLINE_KEY, FAILURE_KEY
from ..serving import SERVER_CALL_KEY, TASK, THREAD
from ..timeouts import TIMED_OUT, CallTimeout, Expired, log_timeout
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
        call = environ.get(SERVER_CALL_KEY)
        try:
            if call is not None:
                lent = call.lent
                if lent is TASK:
                    # The function's task is cancelled at the deadline (timeouts.cancelling).
                    environ[DEADLINE_KEY] = monotonic() + self.seconds
                    return self.app(environ, start_response)
                if lent is THREAD and call.answers_now:
                    return self.watchdog.run(self.app, environ, start_response)
            return self.handed_off(environ, start_response)
        except Expired as expired:
            return self.timed_out(environ, start_response, expired)

    def timed_out(self, environ: WSGIEnvironment, start_response: StartResponse, expired: Expired) -> Iterable[bytes]:
        environ[FAILURE_KEY] = "timeout"
        if expired.answered:
            # The function may have set a status just before its thread came back: replace it
            # (exc_info says so); the server's write then fails on the shut socket and it
            # closes the connection.
            raised_at = expired.__traceback__
            assert raised_at is not None  # it was raised and caught
            TIMED_OUT.answer(environ, start_response, exc_info=(Expired, expired, raised_at))
            return []
        log_timeout(self.seconds, expired.why, environ)
        return TIMED_OUT(environ, start_response)

    def liveness_problem(self) -> str | None:
        """Why the process cannot serve calls any more, or None."""
        if self.watchdog.stuck >= self.watchdog.limit:
            return f"all {self.watchdog.limit} call threads are stuck in calls that timed out"
        return self.pooled.liveness_problem()

    def __repr__(self) -> str:
        return f"TimeoutMiddleware(seconds={self.seconds:g}, max_threads={self.pooled.max_threads})"
