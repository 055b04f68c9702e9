"""granian: a Rust HTTP server calling the function through WSGI (``funcwsgi[granian]``).

``SERVER_WORKERS`` processes, each with ``SERVER_NUMTHREADS`` Python threads;
an async function is served through ASGI on each worker's event loop instead.
The function is loaded once in the main process; workers forked from it
inherit it (where workers are spawned instead, each loads it again, quietly).
On SIGTERM granian stops accepting and lets each worker finish its calls;
workers still running after ``SERVER_GRACEFUL_TIMEOUT`` are killed. A worker
that dies while serving is replaced.
"""

from __future__ import annotations

import logging
import multiprocessing.util
import os
import signal
import sys
import tempfile
import threading
from collections.abc import Callable
from typing import Any

from granian.constants import HTTPModes, Interfaces
from granian.http import HTTP1Settings, HTTP2Settings
from granian.log import LogLevels
from granian.server import Server

from funcwsgi.adapters import warn_about_hostile_gaps
from funcwsgi.adapters.specs import HEAD_LIMIT
from funcwsgi.application import FunctionService, build_service, default_app
from funcwsgi.compat import load_function, resolve
from funcwsgi.config import Config
from funcwsgi.errors import EXIT_STARTUP_ERROR, StartupError, print_startup_error
from funcwsgi.process import mark_printed, resume_collector, start_process, stop_process

_service: FunctionService | None = None
log = logging.getLogger("funcwsgi")


def serve(config: Config) -> int:
    global _service
    _service = default_app(config)
    warn_about_hostile_gaps("granian")
    if config.http2:
        log.warning(HTTP2_GAPS)
    server = Server(
        "funcwsgi:app",  # a label: workers get the app from worker_app()
        address=config.server_host,
        port=config.server_port,
        # An async function is served on each worker's event loop, through the service's ASGI side.
        interface=Interfaces.ASGI if _service.on_loop else Interfaces.WSGI,
        workers=config.server_workers,
        blocking_threads=1 if _service.on_loop else config.server_numthreads,
        workers_kill_timeout=max(1, round(config.server_graceful_timeout)),
        # A function that kills its worker (os._exit, a signal, the OOM killer) costs that
        # worker, not the server: granian starts a new one, as gunicorn does. A worker that
        # dies again within seconds of its restart is a crash loop, and granian then exits.
        respawn_failed_workers=True,
        log_level=LogLevels(config.server_log_level),
        log_access=False,
        websockets=False,
        http1_settings=http1_settings(config),
        # HTTP/2 only when asked for: granian holds a call thread for each stream whose answer the
        # client does not read, with no send timeout, so a few connections stop the service.
        http=HTTPModes.auto if config.http2 else HTTPModes.http1,
        http2_settings=http2_settings(config),
    )
    _relay_stop_signals(lambda signum: server.signal_handler_interrupt())  # type: ignore[no-untyped-call]  # unannotated in granian
    resume_collector()  # in the main process, before granian forks its workers
    server.serve(target_loader=worker_app, wrap_loader=False)
    marker = _boot_failure_marker(os.getpid())
    if os.path.exists(marker):
        os.remove(marker)
        return EXIT_STARTUP_ERROR
    return 0


def http1_settings(config: Config) -> HTTP1Settings:
    """granian's HTTP/1.1 timer and keep-alive (docs/servers.md#the-other-adapters).

    granian (hyper) has one timer for a connection waiting for a head: it runs from the
    accept and again from the end of each answer, so it times a silent connection and an
    idle kept-alive one alike. Both rules cannot hold on it at once: a connection that
    sends nothing is closed after SERVER_HEADER_TIMEOUT, and an idle pooled connection
    is left for the proxy in front to close (its idle timeout is far longer:
    docs/deployment.md#idle-connections-behind-the-platforms-proxy). So by default no
    connection is kept alive: each answer says ``Connection: close``, the proxy pools
    nothing it could reuse as the runtime closes it, and the timer is the head timeout.
    A SERVER_KEEPALIVE_TIMEOUT that is set asks for keep-alive: the timer is then the
    longer of the two, and a silent connection is closed only after it too.
    """
    if "server_keepalive_timeout" not in config.given:
        return HTTP1Settings(header_read_timeout=_milliseconds(config.server_header_timeout), keep_alive=False)
    longer = max(config.server_header_timeout, config.server_keepalive_timeout)
    return HTTP1Settings(header_read_timeout=_milliseconds(longer), keep_alive=True)


def _milliseconds(seconds: float) -> int:
    return max(1, round(seconds * 1000))


#: Flow-control windows: how much request body one stream, and one connection, may send ahead of the function's reads.
STREAM_WINDOW = 256 * 1024
CONNECTION_WINDOW = 1024 * 1024
#: Answer bytes granian buffers per stream for a client that has not opened its window yet.
SEND_BUFFER = 64 * 1024
#: granian's longest keep-alive ping interval.
LONGEST_PING_INTERVAL_MS = 60_000


#: What SERVER_HTTP2=true on granian leaves unbounded, said at start-up (tests/reliability/test_http2.py's GAPS).
HTTP2_GAPS = (
    "SERVER_HTTP2=true: granian's HTTP/2 cannot bound a client that holds back streamed answers with its window"
    " (it keeps a call thread each), a stream reset mid-body without a content-length (the function runs with the part"
    " that came), pseudo-header fields in trailers, or a connection that sends nothing (never closed; docs/servers.md#http2)"
)


def http2_settings(config: Config) -> HTTP2Settings:
    """granian's HTTP/2 limits, from the runtime's HTTP/1.1 ones (docs/servers.md#http2)."""
    return HTTP2Settings(
        # The HPACK-decoded header list, CONTINUATION frames included, may be as large as an HTTP/1.1 head.
        max_headers_size=HEAD_LIMIT,
        max_concurrent_streams=config.server_http2_max_streams,
        initial_stream_window_size=STREAM_WINDOW,
        initial_connection_window_size=CONNECTION_WINDOW,
        max_send_buffer_size=SEND_BUFFER,
        # A connection whose peer stops answering pings is closed: pinged after it has been idle for
        # SERVER_KEEPALIVE_TIMEOUT (at most granian's 60 s), dropped SERVER_HEADER_TIMEOUT later.
        keep_alive_interval=min(LONGEST_PING_INTERVAL_MS, _milliseconds(config.server_keepalive_timeout)),
        keep_alive_timeout=max(1, round(config.server_header_timeout)),
    )


STOP_SIGNALS = {signal.SIGTERM, signal.SIGINT}
#: How long a worker that failed to start waits to be stopped by the main process.
STOP_WAIT_SECONDS = 10


def _relay_stop_signals(on_signal: Callable[[int], None], *, in_worker: bool = False) -> None:
    """Take SIGTERM/SIGINT on one thread of this process, whichever thread the kernel picks.

    granian waits for its stop signals in ``threading.Event.wait()`` on the
    main thread (of the main process and of each worker), which only a
    signal delivered to that very thread interrupts; the kernel may hand a
    process's signal to any of its threads (granian's worker watchers, its
    Rust runtime threads), and then the process never stops. So the stop
    signals are blocked in every thread (threads made later, and forked
    workers, inherit the mask) and received by one thread with ``sigwait``,
    which calls ``on_signal``.

    In a worker only the first signal is passed on. A signal to the whole
    process group (Ctrl-C in a terminal, a supervisor stopping the group)
    reaches each worker besides granian's own from its main process, and
    granian's stop handler, called a second time, blocks (a send on a channel
    of one) while holding the GIL: the worker hung until it was killed after
    SERVER_GRACEFUL_TIMEOUT (7 of 75 workers on the event loop path, with the
    group signalled twice).
    """
    signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)

    def relay() -> None:
        on_signal(signal.sigwait(STOP_SIGNALS))
        while True:
            signum = signal.sigwait(STOP_SIGNALS)
            if not in_worker:  # a worker is stopping already: the rest are taken and dropped
                on_signal(signum)

    threading.Thread(target=relay, name="funcwsgi-signals", daemon=True).start()


def _run_installed_handler(signum: int) -> None:
    """In a worker: what the signal would have done, run by the relay thread."""
    handler = signal.getsignal(signum)
    if callable(handler):
        handler(signum, None)  # granian's: sets the worker's stop event, thread-safe
        return
    # Before granian installed its handler (worker_app reset it to the default): stop now,
    # by taking the signal on this thread with the default action.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signum})
    signal.pthread_kill(threading.get_ident(), signum)


def _raise_for_the_loop(signum: int) -> None:
    """In a worker on the event loop: the signal raised on this thread, for the loop to take."""
    # Raised as SIGINT, unblocked on this thread alone: Python's handler writes the loop's wakeup fd
    # and the loop runs granian's handler, which takes SIGINT as it takes SIGTERM (before granian
    # installed it, the default action ends the worker, as it would have). SIGTERM stays blocked
    # meanwhile, so a group's next SIGTERM, or the main process's, cannot slip in and call the
    # handler a second time (it did when the signal was raised as SIGTERM).
    while signal.sigtimedwait({signal.SIGINT}, 0) is not None:
        pass
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    signal.raise_signal(signal.SIGINT)
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})


def _boot_failure_marker(main_pid: int) -> str:
    """A file a worker leaves for the main process when it cannot start (works with fork and spawn)."""
    return os.path.join(tempfile.gettempdir(), f"funcwsgi-granian-boot-failed-{main_pid}")


def worker_app() -> Any:
    """Runs in each worker process before it serves."""
    global _service
    # The main process's handlers came along with the fork and mean nothing here; the stop
    # signals stay blocked (forked and spawned workers inherit the mask) until the relay
    # below takes them.
    for signum in STOP_SIGNALS:
        signal.signal(signum, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        if _service is None:  # a spawned worker: nothing was inherited
            config = resolve(Config.from_env())
            mark_printed()
            _service = build_service(config, load_function(config))
        start_process(_service)
    except StartupError as error:
        print_startup_error(error)
        # A worker that cannot start must stop the server, not be restarted over and over:
        # tell the main process, before exiting, so it shuts down instead of respawning.
        with open(_boot_failure_marker(os.getppid()), "w"):
            pass
        os.kill(os.getppid(), signal.SIGTERM)
        # Stay until the main process, shutting down, stops this worker: a worker that left
        # first could be respawned, and fail again, before the main process saw its signal.
        signal.sigtimedwait(STOP_SIGNALS, STOP_WAIT_SECONDS)
        sys.exit(EXIT_STARTUP_ERROR)
    # granian starts this worker's threads once this returns: the relay takes the stop signals. granian's
    # ASGI worker takes them through the event loop (a wakeup fd any thread receiving one writes to).
    _relay_stop_signals(_raise_for_the_loop if _service.on_loop else _run_installed_handler, in_worker=True)
    # multiprocessing runs its finalizers when the worker process ends after its last call.
    multiprocessing.util.Finalize(None, stop_process, args=(_service,), exitpriority=10)
    return _service.asgi if _service.on_loop else _service
