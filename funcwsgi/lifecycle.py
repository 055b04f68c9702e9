"""The function's lifecycle hooks around a worker process: ``start()`` before serving, ``stop()`` at shutdown.

Every adapter calls :func:`start_process` once in each process that serves
(gunicorn: in ``post_fork``; single-process servers: just before serving),
and :func:`stop_process` when that process stops serving.
"""

from __future__ import annotations

import gc
import inspect
import logging
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from . import workers
from .errors import StartupError
from .loader import _user_traceback

if TYPE_CHECKING:
    from .application import FunctionService

log = logging.getLogger("funcwsgi")

_started_in: int | None = None
_stopped_in: int | None = None


def start_process(service: FunctionService) -> None:
    """Run the per-worker callbacks, then the function's ``start()``, once per process.

    A ``start()`` that raises becomes a :class:`StartupError` naming the
    hook, the file and the exception, with the user's traceback.
    """
    global _started_in
    if _started_in == os.getpid():
        return
    _started_in = os.getpid()
    workers.start_worker(service)
    run_start_hook(service)
    # Everything made so far (modules, the stack, what start() built) lives as long as the
    # process: out of the collector's sight, the collections that calls trigger stay
    # small, and forked workers keep sharing those pages instead of copying them.
    gc.freeze()


def stop_process(service: FunctionService) -> None:
    """Run the function's ``stop()`` once per process; a failure is logged, never raised."""
    global _stopped_in
    if _stopped_in == os.getpid():
        return
    _stopped_in = os.getpid()
    run_stop_hook(service)


def run_start_hook(service: FunctionService) -> None:
    """The function's ``start()``, if it has one; a failure is a :class:`StartupError`."""
    hook = service.loaded.hooks.get("start")
    if hook is None:
        return
    try:
        _call(hook)
    except BaseException as error:  # the user's code may raise anything, SystemExit included
        raise StartupError(
            f"start() in {service.loaded.path} raised {type(error).__name__}: {error}",
            _user_traceback(error, service.loaded.path),
        ) from None


def run_stop_hook(service: FunctionService) -> None:
    """The function's ``stop()``, if it has one; a failure is logged, never raised."""
    hook = service.loaded.hooks.get("stop")
    if hook is None:
        return
    try:
        _call(hook)
    except BaseException:
        log.error("stop() in %s raised", service.loaded.path, exc_info=True)


def _call(hook: Callable[[], Any]) -> None:
    result = hook()
    if inspect.isawaitable(result):
        import asyncio  # only for async hooks: a sync function's server never imports it

        asyncio.run(_awaited(result))


async def _awaited(awaitable: Any) -> None:
    await awaitable
