"""Work done once in each worker process, after it forks and before it serves.

Some state must not be shared across ``fork()``: exporter threads, sockets,
event loops. Parts of the runtime register a callback here at start-up; every
adapter calls :func:`start_worker` once per worker process before serving
(gunicorn from its ``post_fork`` hook, single-process servers before they
start), so the callbacks run in the process that will use what they create.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from .application import FunctionService

WorkerInit = Callable[[FunctionService], None]

_callbacks: list[WorkerInit] = []
_lock = threading.Lock()
_started_in: int | None = None


def on_worker_start(callback: WorkerInit) -> WorkerInit:
    """Register ``callback(service)`` to run in each worker process before it serves."""
    with _lock:
        if callback not in _callbacks:
            _callbacks.append(callback)
    return callback


def start_worker(service: FunctionService) -> None:
    """Run the registered callbacks, once per process (a fork resets the guard)."""
    import os

    global _started_in
    with _lock:
        if _started_in == os.getpid():
            return
        _started_in = os.getpid()
        callbacks = list(_callbacks)
    for callback in callbacks:
        callback(service)
