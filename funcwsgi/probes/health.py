"""Readiness and liveness: ``/health/readiness``, ``/health/liveness`` and ``/healthz``.

Each answers ``200 OK`` when every check passes and ``503`` with the first
problem otherwise. A check is a callable returning ``None`` when healthy or a
short reason when not; the function's ``ready()`` and ``alive()`` hooks become
checks through :func:`hook_check`. A hook may also return a whole
:class:`~funcwsgi.replies.Reply`: another platform's own probe answer
(Knative func-python's), sent unless another check finds a problem first.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ..handler.signatures import is_async
from ..replies import Reply, probe_reply

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIEnvironment

log = logging.getLogger("funcwsgi.health")

Check = Callable[[], "str | Reply | None"]

HEALTHY = probe_reply(200, "OK")


class HealthCheck:
    """A WSGI app for one probe path."""

    def __init__(self, checks: Sequence[Check]) -> None:
        self.checks = tuple(checks)

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        answer = HEALTHY
        for check in self.checks:
            problem = check()
            if isinstance(problem, Reply):
                if int(problem.status[:3]) >= 400:
                    return problem(environ, start_response)
                answer = problem
            elif problem:
                return probe_reply(503, problem)(environ, start_response)
        return answer(environ, start_response)

    def __repr__(self) -> str:
        return f"HealthCheck({len(self.checks)} checks)"


def hook_check(hook: Callable[[], Any], name: str, where: str) -> Check:
    """Turn the function's ``ready``/``alive`` hook into a check.

    The hook returns ``True`` or ``None`` when healthy, ``False`` when not,
    or a string saying why not (sent as the 503 body); an ``async def`` hook
    is awaited (by the call's task on the event-loop path). An exception is
    logged with its traceback and answered with a fixed message, so nothing
    of it reaches the caller.
    """
    failed = f"{name}() failed"
    said_no = f"{name}() returned False"
    call = _awaiting(hook, name) if is_async(hook) else hook

    def check() -> str | Reply | None:
        try:
            result = call()
        except Exception:
            log.error("%s() in %s raised", name, where, exc_info=True)
            return failed
        if result is None or result is True:
            return None
        if isinstance(result, Reply):
            return result
        if isinstance(result, str):
            return result or said_no
        return None if result else said_no

    check.__name__ = f"{name}_hook"
    return check


def _awaiting(hook: Callable[[], Any], name: str) -> Callable[[], Any]:
    """An ``async def`` hook called as a plain one: what its coroutine returns."""
    from ..eventloop.coroutines import awaited  # only for async hooks: a sync server never imports asyncio

    def call() -> Any:
        return awaited(hook(), name)

    return call
