"""gunicorn, the default: ``SERVER_WORKERS`` processes x ``SERVER_NUMTHREADS`` threads (``gthread``).

:func:`gunicorn_settings` is shared with the repository's ``gunicorn.conf.py``
(through :mod:`funcwsgi.gunicorn_conf`), so ``gunicorn funcwsgi:app`` and
``funcwsgi serve`` run the same server with the same hooks.
"""

from __future__ import annotations

import atexit
import logging
import os
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from gunicorn.app.base import BaseApplication
from gunicorn.workers.gthread import ThreadWorker

from adapters import host_port
from funcwsgi.application import FunctionService, default_app
from funcwsgi.errors import StartupError, print_startup_error
from funcwsgi.process import start_process, stop_process, worker_exited
from funcwsgi.timeouts.watchdog import stuck_calls, use_server_threads

if TYPE_CHECKING:
    from funcwsgi.config import Config

log = logging.getLogger("funcwsgi")

# gunicorn's arbiter stops the whole server when a worker exits with this status while booting.
WORKER_BOOT_ERROR = 3


def gunicorn_settings(config: Config) -> dict[str, Any]:
    """gunicorn's settings and server hooks, from the runtime's configuration."""

    def service_of(server: Any) -> FunctionService:
        # Embedded, the application object carries the service; with gunicorn.conf.py
        # it is `funcwsgi:app`, built once in the master by on_starting.
        service = getattr(server.app, "service", None)
        return service if isinstance(service, FunctionService) else default_app(config)

    def on_starting(server: Any) -> None:
        """Print the start-up lines and load the function once, in the master, before any fork."""
        service_of(server)

    def post_fork(server: Any, worker: Any) -> None:
        """In each new worker, before it serves: per-worker state, then the function's start()."""
        try:
            start_process(service_of(server))
        except StartupError as error:
            print_startup_error(error)
            sys.exit(WORKER_BOOT_ERROR)

    def worker_exit(server: Any, worker: Any) -> None:
        """In the worker, once it has stopped serving: the function's stop()."""
        stop_process(service_of(server))
        stuck = stuck_calls()
        if stuck:
            # A gthread thread stuck in a call that timed out would be waited for
            # forever by the interpreter's exit: run the exit handlers (span and
            # metric flushes) and leave without joining it.
            log.warning("Leaving %d call(s) that timed out and never returned", stuck)
            atexit._run_exitfuncs()
            logging.shutdown()
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(0)

    def child_exit(server: Any, worker: Any) -> None:
        """In the master, after a worker process ended, for whatever reason."""
        if server.LISTENERS:  # not shutting down: the worker crashed or was recycled
            log.warning("Worker process %s exited; gunicorn starts a new one", worker.pid)
        worker_exited(worker.pid)

    settings: dict[str, Any] = {
        "bind": [host_port(config.server_host, config.server_port)],
        "worker_class": f"{__name__}.RecyclingThreadWorker",
        "workers": config.server_workers,
        "threads": config.server_numthreads,
        "graceful_timeout": max(1, round(config.server_graceful_timeout)),
        "max_requests": config.server_max_requests,
        "loglevel": config.server_log_level,
        "proc_name": f"funcwsgi {config.func_name}".strip(),
        "on_starting": on_starting,
        "post_fork": post_fork,
        "worker_exit": worker_exit,
        "child_exit": child_exit,
    }
    if os.path.isdir("/dev/shm"):
        # The worker heartbeat file on tmpfs: containers often have a slow or read-only /tmp.
        settings["worker_tmp_dir"] = "/dev/shm"
    return settings


class RecyclingThreadWorker(ThreadWorker):  # type: ignore[misc]  # gunicorn is untyped: its classes are Any
    """gunicorn's ``gthread`` worker, lending its threads to the timeout layer, minus a connection reset when it is recycled.

    Once a worker has served ``SERVER_MAX_REQUESTS`` calls it stops serving,
    but gthread's loop can still accept one more connection before it exits,
    and that connection is then reset (gunicorn issue 3038). A worker that is
    on its way out leaves new connections in the listening socket's queue,
    where the next worker picks them up.
    """

    def accept(self, server: Any, listener: Any) -> None:
        if self.alive:
            super().accept(server, listener)

    def get_thread_pool(self) -> ThreadPoolExecutor:
        """gthread's pool, lent to the timeout layer: calls run on these threads, no hand-off."""
        pool: ThreadPoolExecutor = super().get_thread_pool()
        self.stuck_sockets: set[Any] = set()
        self.resizing = threading.Lock()
        use_server_threads(self)
        return pool

    def call_stuck(self, environ: dict[str, Any], extra_threads: int) -> None:
        """A call timed out and its thread is stuck: more threads keep the pool at full strength."""
        self._resize(extra_threads, self.stuck_sockets.add, environ)

    def call_back(self, environ: dict[str, Any], extra_threads: int) -> None:
        self._resize(extra_threads, self.stuck_sockets.discard, environ)

    def _resize(self, extra_threads: int, note: Any, environ: dict[str, Any]) -> None:
        with self.resizing:
            # ThreadPoolExecutor reads _max_workers each time a call is submitted and
            # starts a thread when none is idle and fewer than that many exist.
            self.tpool._max_workers = self.cfg.threads + extra_threads
            note(environ["gunicorn.socket"])

    def murder_keepalived(self) -> None:
        # Runs on the worker's main thread every loop. A stuck call's client has had
        # its 408: stop waiting for its request (a graceful stop would wait for it in
        # vain); its connection is closed when, if ever, its thread comes back.
        if self.stuck_sockets:
            with self.resizing:
                stuck = [future for future in self.futures if future.conn.sock in self.stuck_sockets]
            for future in stuck:
                self.futures.remove(future)
        super().murder_keepalived()


class EmbeddedGunicorn(BaseApplication):  # type: ignore[misc]  # gunicorn is untyped: its classes are Any
    """gunicorn run from code: settings from the configuration, the already loaded service as the app."""

    def __init__(self, service: FunctionService, settings: dict[str, Any]) -> None:
        self.service = service
        self.settings = settings
        super().__init__()

    def load_config(self) -> None:
        for name, value in self.settings.items():
            self.cfg.set(name, value)

    def load(self) -> FunctionService:
        return self.service


def serve(config: Config) -> int:
    service = default_app(config)
    EmbeddedGunicorn(service, gunicorn_settings(config)).run()  # exits the process itself
    return 0
