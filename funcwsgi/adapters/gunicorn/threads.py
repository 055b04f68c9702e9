"""The threads plain functions run on: ``SERVER_NUMTHREADS`` of them, and one more for each call stuck past its deadline.

A job is a plain callable; it reports its own end to the event loop (one
``call_soon_threadsafe`` per answer, made by the call runner), so the pool
keeps no future and wakes nobody when a job ends. Threads are made as jobs
need them, up to the bound. A call answered by the watchdog while its thread
is still blocked in the function keeps that thread: :meth:`keep_extra` lets
the pool start another in its place.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable

log = logging.getLogger("funcwsgi")

Job = Callable[[], object]


class CallThreads:
    """``threads`` threads (plus ``extra`` while calls are stuck), named ``name-N``."""

    def __init__(self, threads: int, name: str) -> None:
        self.threads = threads
        self.extra = 0
        self.name = name
        self.jobs: queue.SimpleQueue[Job | None] = queue.SimpleQueue()
        self.idle = threading.Semaphore(0)  # one count per thread done with a job and waiting for the next
        self.started = 0
        self.starting = threading.Lock()
        self.stopped = False

    def keep_extra(self, extra: int) -> None:
        """Allow ``extra`` threads beyond ``threads`` (one per stuck call)."""
        self.extra = extra
        if self.jobs.qsize():  # calls wait for a thread: one may start now
            self._start_one()

    def submit(self, job: Job) -> None:
        self.jobs.put(job)
        if not self.idle.acquire(blocking=False):
            self._start_one()

    def _start_one(self) -> None:
        with self.starting:
            if self.started < self.threads + self.extra and not self.stopped:
                self.started += 1
                threading.Thread(target=self._serve, name=f"{self.name}-{self.started}", daemon=True).start()

    def _serve(self) -> None:
        jobs = self.jobs
        while True:
            job = jobs.get()
            if job is None:
                return
            try:
                job()
            except BaseException:  # a job reports its own failures; this keeps the thread
                log.exception("A call's thread failed outside the call")
            del job
            self.idle.release()

    def shutdown(self) -> None:
        """Threads end once the jobs queued before this are done; daemon threads, so none holds the exit."""
        if self.stopped:
            return
        self.stopped = True
        for _ in range(self.started):
            self.jobs.put(None)
