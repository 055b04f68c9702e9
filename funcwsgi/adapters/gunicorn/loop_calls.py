"""An ``async def`` function's call on the edge's loop: the stack in a greenlet, the answer written to the exchange.

No ASGI in between: the edge has read the whole request, so the call's
WSGI environ is made from the exchange at once (as for a call on a thread),
the service's stack runs in a greenlet of the call's task
(:func:`funcwsgi.eventloop.bridge.run_bridged`), which awaits the
function's coroutine, and what the stack answers goes to the exchange
directly: the greenlet runs on the loop's thread. A call costs one task,
with no scope, no ``receive``/``send`` messages and no task or future
watching the client: the edge sets ``client_gone`` and the call's
:class:`LoopEdgeCall` reads it when asked (``sdk.cancelled()``) and when the
function returns (the call counted as cancelled). Admission and the watch
on a blocked loop are :class:`funcwsgi.eventloop.gate.LoopGate`'s, as on
the ASGI side.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from funcwsgi.environ import ASGI_RECEIVE_KEY
from funcwsgi.eventloop.bridge import run_bridged, wait_for
from funcwsgi.middleware.server_errors import failure_logged
from funcwsgi.serving import SERVER_CALL_KEY, TASK, Lent, run_after_response

from .calls import OUTBOX_LIMIT, Exchange, ExchangeCall, Headers, make_environ, roomy

if TYPE_CHECKING:
    from funcwsgi.eventloop.gate import LoopGate

    from .calls import CallRunner

log = logging.getLogger("funcwsgi")

#: Every call's task has this name: asyncio otherwise formats a new "Task-N" for each.
TASK_NAME = "funcwsgi-call"


class LoopEdgeCall(ExchangeCall):
    """What the edge gives a call on its loop (:class:`funcwsgi.serving.ServerCall`): a task."""

    __slots__ = ("task",)
    #: The call's task (set as it is made; None once the call is over).
    task: asyncio.Task[None] | None
    lent: Lent = TASK
    #: The deadline cancels the call's task, and the timeout layer answers through the response.
    answers_now = False
    #: The edge marks the exchange when its client leaves: nothing of the call needs to wait on the connection to hear it.
    tells_when_gone = True
    #: Each call is a task of its own, with a context of its own that ends with it.
    own_context = True

    def answer_now(self, status: str, headers: Sequence[tuple[str, str]], body: bytes) -> None:
        raise OSError("a call on the event loop is answered through its response")

    async def receive(self) -> dict[str, Any]:
        """The ASGI ``receive`` an ASGI function hears its client leave through: ``http.disconnect`` once it has."""
        await self.exchange.disconnected()
        return {"type": "http.disconnect"}

    #: The call is its own ``receive`` in the environ: no bound method made for every call.
    __call__ = receive

    def thread_stuck(self, extra_threads: int) -> None:
        pass

    def thread_back(self, extra_threads: int) -> None:
        pass


class LoopCalls:
    """Runs each exchange's call as a task of the loop, the stack in the task's greenlet."""

    def __init__(self, runner: CallRunner) -> None:
        self.runner = runner
        self.loop = runner.loop
        self.send_timeout = runner.send_timeout
        #: The service's one gate on the loop, whichever side of it serves the calls.
        self.gate: LoopGate = runner.service.asgi.gate
        self.call_stack = runner.call_stack
        self.stream = runner.stream
        #: What each call's greenlet runs, and how its streamed answer goes out (made once: a bound method is an
        #: object made at each look-up).
        self.run_call = self.run
        self.send_piece = self.send
        # Every call here sets the server call and its receive too (see roomy()).
        self.base_environ = roomy({**runner.base_environ, "wsgi.multithread": False, SERVER_CALL_KEY: None, ASGI_RECEIVE_KEY: None})

    def start(self, exchange: Exchange) -> None:
        """On the loop: the exchange's request is complete; its call starts now, or is refused past the bounds."""
        runner = self.runner  # the protocols call this directly (CallRunner.start): the runner's count is kept here
        runner.calls += 1
        if runner.calls == runner.max_calls:
            runner.on_exit()
        gate = self.gate
        if gate.loop is not self.loop:
            gate.watch_loop(self.loop)
        environ = make_environ(self.base_environ, exchange)
        if environ["PATH_INFO"] not in gate.exempt:  # gate.enter(), inlined: every call passes here
            if (gate.limit and gate.inflight >= gate.limit) or gate.admission.standing:
                gate.rejected()
                runner.answer_busy(exchange)
                return
            gate.admitted += 1  # its wait, the lag measured last, is recorded with the others' (gate.record_admitted)
        gate.inflight += 1
        call = environ[SERVER_CALL_KEY] = LoopEdgeCall(exchange, self.send_piece)
        environ[ASGI_RECEIVE_KEY] = call  # its receive (the call's __call__); the body is in wsgi.input already
        # The task runs the greenlet's function itself (no coroutine of our own around it): one frame less on each of
        # the task's steps. The call keeps its task, for the deadline's sweep to cancel (not asked for: asyncio.current_task()).
        call.task = self.loop.create_task(run_bridged(self.run_call, call, environ), name=TASK_NAME)

    def run(self, call: LoopEdgeCall, environ: dict[str, Any]) -> None:
        """In the call's greenlet: the stack, its answer to the exchange, then the exchange is done."""
        exchange = call.exchange
        try:
            body = self.call_stack(environ, call.start_response)  # the runner's call_wsgi(), inlined: a frame less
            if type(body) is list and not call.streamed:
                if call.status is None:
                    raise RuntimeError("the application did not call start_response")
                exchange.respond(call.status, call.headers, [] if call.bodiless else body, True)
            else:
                self.stream(call, body)
        except OSError:
            exchange.abort(None)  # the client left, or stopped reading, mid-answer
        except SystemExit as ended:
            exchange.abort(None)
            self.runner.function_exited(ended.code)
        except BaseException as error:
            if not failure_logged(environ, error):  # else its body failed mid-answer: the errors layer logged it
                log.exception("The call failed outside the function's stack")
            exchange.abort(None)
        finally:
            self.gate.inflight -= 1  # gate.left(), inlined: every call passes here
            # The task's context holds the environ (own_context: not reset), which holds the call: without its task the
            # three part when the task ends, with no garbage collection.
            call.task = None
            exchange.finished()
        if call.later:  # off the loop: the work may block
            self.loop.run_in_executor(None, run_after_response, call.later)

    def send(self, exchange: Exchange, status: str, headers: Headers, chunk: bytes, end: bool) -> None:
        """One piece of a streamed answer, from the call's greenlet; waits (``SERVER_SEND_TIMEOUT`` at most) while the client is behind."""
        if exchange.client_gone:
            raise OSError("the client has gone")
        exchange.respond(status, headers, (chunk,), end)
        if end or exchange.pending() <= OUTBOX_LIMIT:
            return
        drained: asyncio.Future[None] = self.loop.create_future()

        def wake() -> None:
            if not drained.done():
                drained.set_result(None)

        exchange.on_drained(wake)
        try:
            wait_for(asyncio.wait_for(drained, self.send_timeout))
        except TimeoutError:
            exchange.abort(None)
            raise OSError("the client took nothing of the answer for SERVER_SEND_TIMEOUT") from None
        if exchange.client_gone:
            raise OSError("the client has gone")
