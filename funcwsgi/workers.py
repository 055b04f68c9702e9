"""Process lifecycle callbacks: once per server, once per worker, when a worker dies.

Some state must not be shared across ``fork()``: exporter threads, sockets,
event loops. Parts of the runtime register callbacks here when they are built
(the stack is built once, in the server's main process, before any fork);
every adapter then calls

- :func:`start_worker` once in each worker process before it serves
  (gunicorn: ``post_fork``; single-process servers: just before serving);
- :func:`worker_exited` in the main process when a worker process ended
  (gunicorn: ``child_exit``), so per-process files can be cleaned up.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .application import FunctionService

WorkerInit = Callable[["FunctionService"], None]
WorkerExit = Callable[[int], None]

_starts: list[WorkerInit] = []
_exits: list[WorkerExit] = []
_lock = threading.Lock()
_started_in: int | None = None


def on_worker_start(callback: WorkerInit) -> WorkerInit:
    """Register ``callback(service)`` to run in each worker process before it serves."""
    with _lock:
        if callback not in _starts:
            _starts.append(callback)
    return callback


def on_worker_exit(callback: WorkerExit) -> WorkerExit:
    """Register ``callback(pid)`` to run in the main process after a worker ended."""
    with _lock:
        if callback not in _exits:
            _exits.append(callback)
    return callback


def start_worker(service: FunctionService) -> None:
    """Run the start callbacks, once per process (a fork resets the guard)."""
    global _started_in
    with _lock:
        if _started_in == os.getpid():
            return
        _started_in = os.getpid()
        callbacks = list(_starts)
    for callback in callbacks:
        callback(service)


def worker_exited(pid: int) -> None:
    with _lock:
        callbacks = list(_exits)
    for callback in callbacks:
        callback(pid)
