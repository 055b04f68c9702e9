"""gunicorn, the default: ``SERVER_WORKERS`` processes x ``SERVER_NUMTHREADS`` threads.

The worker is funcwsgi's HTTP edge (:mod:`funcwsgi.adapters.gunicorn.worker`):
one event loop per process, llhttp reading every request, plain functions on
``SERVER_NUMTHREADS`` threads and ``async def`` ones on the loop.

:func:`gunicorn_settings` is shared with the repository's ``gunicorn.conf.py``
(through :mod:`funcwsgi.adapters.gunicorn_conf`, public name :mod:`funcwsgi.gunicorn_conf`), so ``gunicorn funcwsgi:app`` and
``funcwsgi serve`` run the same server with the same hooks.
"""

from __future__ import annotations

import atexit
import logging
import math
import os
import sys
from typing import TYPE_CHECKING, Any

from gunicorn.app.base import BaseApplication
from gunicorn.util import parse_address

from funcwsgi.adapters import host_port
from funcwsgi.adapters.gunicorn import boot_signals
from funcwsgi.adapters.gunicorn.server_log import ServerLog
from funcwsgi.adapters.gunicorn_bind import Listening, listening_config
from funcwsgi.adapters.specs import HEAD_LIMIT
from funcwsgi.application import FunctionService, default_app
from funcwsgi.errors import ConfigError, StartupError, print_startup_error, report_and_exit
from funcwsgi.process import resume_collector, start_process, stop_process, worker_exited
from funcwsgi.timeouts.watchdog import stuck_calls

if TYPE_CHECKING:
    from funcwsgi.config import Config

log = logging.getLogger("funcwsgi")

# gunicorn's arbiter stops the whole server when a worker exits with this status (or
# APP_LOAD_ERROR, 4), whenever that happens: a function calling os._exit(3) in a call
# would stop the server. The arbiter is told to reserve no status instead
# (NO_RESERVED_STATUS matches none), and a worker that ended before it booted stops the
# server with this status, whatever its own (:class:`BootReports`).
WORKER_BOOT_ERROR = 3
#: funcwsgi's HTTP edge worker (:mod:`funcwsgi.adapters.gunicorn.worker`): every function runs on it.
EDGE_WORKER = "funcwsgi.adapters.gunicorn.worker.HttpEdgeWorker"
NO_RESERVED_STATUS = -1


class BootReports:
    """Which workers finished booting, and which stopped in order, told to the master through a pipe made before any fork.

    A worker writes its pid once it is about to serve, and its pid negated
    once its loop stopped in order (``SERVER_MAX_REQUESTS`` reached, a
    reload, SIGTERM); the master reads the pipe when a worker ended. One that
    never wrote failed to boot (its ``start()`` raised, or it died on the
    way): the server stops then, not in a loop of new workers that fail the
    same way. What a worker does once booted, its exit status included, never
    stops the server.
    """

    def __init__(self) -> None:
        self.reader, self.writer = os.pipe()
        os.set_blocking(self.reader, False)
        os.set_blocking(self.writer, False)
        self.booted: set[int] = set()
        self.stopped: set[int] = set()
        self.unread = b""

    def report_booted(self, pid: int) -> None:
        """In the worker, about to serve."""
        self._write(pid, "booted")

    def report_stopped(self, pid: int) -> None:
        """In the worker, its loop stopped in order: its exit is no crash."""
        self._write(-pid, "stopped")

    def _write(self, number: int, what: str) -> None:
        try:
            os.write(self.writer, b"%d\n" % number)  # a few bytes, below PIPE_BUF: the write is whole or not at all
        except BlockingIOError:  # a master that stopped reading; then it is not known
            log.warning("Could not report worker %s as %s", abs(number), what)

    def had_booted(self, pid: int) -> bool:
        """In the master, after worker ``pid`` ended."""
        return self._taken(self.booted, pid)

    def stopped_in_order(self, pid: int) -> bool:
        """In the master, after worker ``pid`` ended (and :meth:`had_booted` was asked)."""
        return self._taken(self.stopped, pid)

    def _taken(self, reported: set[int], pid: int) -> bool:
        """Whether ``pid`` was reported, forgetting it: a later worker may get the same pid."""
        self._read()
        if pid in reported:
            reported.discard(pid)
            return True
        return False

    def _read(self) -> None:
        while True:
            try:
                chunk = os.read(self.reader, 65536)
            except BlockingIOError:
                break
            if not chunk:
                break
            self.unread += chunk
        *lines, self.unread = self.unread.split(b"\n")
        for number in (int(line) for line in lines if line):
            (self.booted if number > 0 else self.stopped).add(abs(number))


def import_event_loop() -> None:
    """Import uvloop in the master, before any fork: the edge workers' loop (issue 44, memory).

    A worker that imports it after the fork maps the pages of the extension's
    initialisation code as it runs them, about 0.4 MB of each worker's resident
    memory; imported here, every worker inherits the module and never runs
    that code. Without uvloop the worker runs asyncio's own loop.
    """
    try:
        import uvloop  # noqa: F401
    except ImportError:
        pass


def listening(bind: str) -> Listening:
    """One of gunicorn's ``bind`` addresses, read as gunicorn reads it."""
    address = parse_address(bind)
    return (address[0], address[1]) if isinstance(address, tuple) else bind


def gunicorn_settings(config: Config) -> dict[str, Any]:
    """gunicorn's settings and server hooks, from the runtime's configuration."""

    def service_of(server: Any) -> FunctionService:
        # Embedded, the application object carries the service; with gunicorn.conf.py
        # it is `funcwsgi:app`, built once in the master by on_starting.
        service = getattr(server.app, "service", None)
        return service if isinstance(service, FunctionService) else default_app(config)

    boots: list[BootReports] = []  # made in the master by on_starting, inherited by the workers

    def on_starting(server: Any) -> None:
        """Print the start-up lines and load the function once, in the master, before any fork.

        Plain and async functions alike run on funcwsgi's HTTP edge worker, unless
        another worker class was asked for (``gunicorn -k ...``).
        """
        nonlocal config
        if list(server.cfg.bind) != settings["bind"]:
            # `-b`/`--bind` (or GUNICORN_CMD_ARGS) win over a configuration file, and over
            # SERVER_HOST/SERVER_PORT's defaults; an explicitly set one that differs stops the server.
            try:
                config = listening_config(config, [listening(address) for address in server.cfg.bind])
            except ConfigError as error:
                report_and_exit(error)
        service_of(server)  # the function, loaded once in the master before any fork
        if server.cfg.worker_class_str == EDGE_WORKER:
            import_event_loop()
        server.WORKER_BOOT_ERROR = server.APP_LOAD_ERROR = NO_RESERVED_STATUS
        boots.append(BootReports())

    def when_ready(server: Any) -> None:
        """In the master, listening, before its first fork: the collector given back (hold_collector)."""
        resume_collector()

    def pre_fork(server: Any, worker: Any) -> None:
        """In the master, right before it forks a worker: a shutdown signal sent meanwhile is not lost."""
        boot_signals.hold()

    def post_worker_init(worker: Any) -> None:
        """In the worker, booted: from here on its exit status is the function's business."""
        if boots:  # none when a configuration reload (SIGHUP) made these hooks anew
            boots[0].report_booted(os.getpid())
        boot_signals.hand_over()  # a SIGTERM that came while it booted: it stops now

    def post_fork(server: Any, worker: Any) -> None:
        """In each new worker, before it serves: per-worker state, then the function's start()."""
        boot_signals.take_early()
        try:
            start_process(service_of(server))
        except StartupError as error:
            print_startup_error(error)
            sys.exit(WORKER_BOOT_ERROR)

    def worker_exit(server: Any, worker: Any) -> None:
        """In the worker, once it has stopped serving: the function's stop()."""
        if boots and getattr(worker, "stopped_in_order", False):  # funcwsgi's edge worker says so
            boots[0].report_stopped(os.getpid())
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
        worker_exited(worker.pid)
        if not server.LISTENERS:  # shutting down
            return
        if boots and not boots[0].had_booted(worker.pid):
            from gunicorn.errors import HaltServer

            raise HaltServer("Worker failed to boot.", WORKER_BOOT_ERROR)
        if boots and boots[0].stopped_in_order(worker.pid):
            return  # recycled after SERVER_MAX_REQUESTS calls, or replaced by a reload: gunicorn's own lines say so
        log.warning("Worker process %s exited; gunicorn starts a new one", worker.pid)

    settings: dict[str, Any] = {
        "bind": [host_port(config.server_host, config.server_port)],
        "worker_class": EDGE_WORKER,
        "worker_connections": config.server_max_connections,
        "keepalive": max(1, math.ceil(config.server_keepalive_timeout)),
        "workers": config.server_workers,
        "threads": config.server_numthreads,
        "graceful_timeout": max(1, round(config.server_graceful_timeout)),
        "max_requests": config.server_max_requests,
        "loglevel": config.server_log_level,
        "proc_name": f"funcwsgi {config.func_name}".strip(),
        "on_starting": on_starting,
        "when_ready": when_ready,
        "pre_fork": pre_fork,
        "post_fork": post_fork,
        "post_worker_init": post_worker_init,
        "worker_exit": worker_exit,
        "child_exit": child_exit,
        # gunicorn's control socket (gunicornc) is a thread and an event loop in the master, stopped and
        # restarted around every fork, and a socket under $HOME: an ERROR line at each start on a read-only
        # root filesystem. A function's pod is managed through its settings and Kubernetes, not gunicornc.
        "control_socket_disable": True,
    }
    if config.http2:
        # gunicorn's own HTTP/2, without TLS, on the same port as HTTP/1.1: a connection that opens
        # with the preface (prior knowledge), or an HTTP/1.1 request with Upgrade: h2c
        # (docs/servers.md#http2 justifies the limits).
        settings.update(
            http_protocols="h2,h1",
            http2_cleartext="both",
            http2_max_concurrent_streams=config.server_http2_max_streams,
            http2_max_header_list_size=HEAD_LIMIT,
        )
    if os.path.isdir("/dev/shm"):
        # The worker heartbeat file on tmpfs: containers often have a slow or read-only /tmp.
        settings["worker_tmp_dir"] = "/dev/shm"
    return settings


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
    # gunicorn's lines as funcwsgi's records. Only here: run by gunicorn's own command (the configuration module), its
    # logger and logging options (--access-logfile, --log-config, syslog) stay the user's.
    settings = {**gunicorn_settings(config), "logger_class": ServerLog}
    EmbeddedGunicorn(service, settings).run()  # exits the process itself
    return 0
