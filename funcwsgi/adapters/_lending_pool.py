"""The worker's call threads: a pool that can keep a thread more for each call stuck past its deadline.

gunicorn's gthread worker makes its pool through ``get_thread_pool()``, which
gunicorn documents as the method to override to customise the pool; this is
the pool funcwsgi's worker returns. A call answered by the timeout's
watchdog while its thread is still blocked in the function keeps that
thread: :meth:`LendingPool.keep_extra` lets the pool start another in its
place, so the worker keeps ``threads`` threads for other calls.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

_STOP = None


class LendingPool:
    """``threads`` threads (plus ``extra`` while calls are stuck), made as calls need them."""

    def __init__(self, threads: int, name: str) -> None:
        self.threads = threads
        self.extra = 0
        self.name = name
        self.jobs: queue.SimpleQueue[tuple[Future[Any], Callable[..., Any], tuple[Any, ...]] | None] = queue.SimpleQueue()
        self.idle = threading.Semaphore(0)  # one count per thread waiting for a job
        self.started = 0
        self.starting = threading.Lock()
        self.stopped = False

    def keep_extra(self, extra: int) -> None:
        """Allow ``extra`` threads beyond ``threads`` (one per stuck call)."""
        self.extra = extra

    def submit(self, function: Callable[..., Any], *args: Any) -> Future[Any]:
        future: Future[Any] = Future()
        self.jobs.put((future, function, args))
        if not self.idle.acquire(blocking=False):
            with self.starting:
                if self.started < self.threads + self.extra:
                    self.started += 1
                    threading.Thread(target=self._serve, name=f"{self.name}-{self.started}", daemon=True).start()
        return future

    def _serve(self) -> None:
        while True:
            job = self.jobs.get()
            if job is _STOP:
                return
            future, function, args = job
            if future.set_running_or_notify_cancel():
                try:
                    result = function(*args)
                except BaseException as error:  # handed to whoever waits on the future
                    future.set_exception(error)
                    del error
                else:
                    future.set_result(result)
            del job, future, function, args
            self.idle.release()

    def shutdown(self, wait: bool = True) -> None:
        """Threads end once the jobs queued before this are done; daemon threads, so none holds the exit."""
        if self.stopped:
            return
        self.stopped = True
        for _ in range(self.started):
            self.jobs.put(_STOP)
