"""The moments of a server process's life, in one place.

- **server start**, once, in the main process: :func:`print_startup_lines`
  around loading the function;
- **worker start**, once in each process that serves (gunicorn: ``post_fork``;
  single-process servers: just before serving): :func:`start_process` runs the
  callbacks registered with :func:`on_worker_start`, then the function's
  ``start()``;
- **worker exit**, in the main process after a worker process ended (gunicorn:
  ``child_exit``): :func:`worker_exited` runs the callbacks registered with
  :func:`on_worker_exit`, so per-process files can be cleaned up;
- **stop**, when a process stops serving: :func:`stop_process` runs the
  function's ``stop()``.

Some state must not be shared across ``fork()``: exporter threads, sockets,
event loops. Parts of the runtime register their callbacks here when they are
built (the stack is built once, in the server's main process, before any fork).
"""

from __future__ import annotations

import gc
import os
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from .errors import StartupError

# logging, inspect and ipaddress are imported where used, for the same reason as below.
if TYPE_CHECKING:
    # Only for the annotations: `funcwsgi serve` imports this module to hold the collector
    # back (hold_collector) before it imports the settings and the request path.
    from .config import Config
    from .handler.loader import LoadedFunction

LOGGER = "funcwsgi"

T = TypeVar("T")


class Service(Protocol):
    """What the moments need of a service: its settings and its function."""

    config: Config
    loaded: LoadedFunction
    #: Whether its calls run on an event loop (an async function), where hundreds are in flight at once.
    on_loop: bool


WorkerInit = Callable[[Service], None]
WorkerExit = Callable[[int], None]

_starts: list[WorkerInit] = []
_exits: list[WorkerExit] = []
_lock = threading.Lock()
_callbacks_run_in: int | None = None
_started_in: int | None = None
_stopped_in: int | None = None
_printed = False


# -- server start -------------------------------------------------------------------------


def startup_lines(config: Config, address: str | None = None) -> list[str]:
    """The lines, ``address`` naming where the server listens when the settings do not (gunicorn's own bind)."""
    lines = [f"Importing function sources from {config.handler_path}:{config.handler_function_name}"]
    if config.handler_platform not in (None, "funcwsgi", "kyma", "kubeless"):
        lines.append(f"Calling it with the {config.handler_platform} contract (HANDLER_PLATFORM chooses another)")
    if config.trace_collector_endpoint:
        lines.append(f"Tracing configured with endpoint {config.trace_collector_endpoint}")
    else:
        lines.append("Tracing disabled: TRACE_COLLECTOR_ENDPOINT is not set")
    if config.publisher_proxy_address:
        lines.append(f"Publisher Proxy available on address {config.publisher_proxy_address}")
    else:
        lines.append("Publisher Proxy not configured: PUBLISHER_PROXY_ADDRESS is not set")
    lines.append(f"Starting {config.func_runtime} server {address or f'{config.server_host}:{config.server_port}'}")
    return lines


def print_startup_lines(config: Config, loader: Callable[[], T], address: str | None = None) -> T:
    """Print the start-up lines once per server around ``loader``, and return what it made.

    The first line says which file is imported, so it comes before the import;
    the others only once the function has loaded, so a function that fails to
    load never prints "Starting". A server that forks workers prints the lines
    in its master; the flag is inherited by the workers, which stay quiet.
    """
    global _printed
    if _printed:
        return loader()
    lines = startup_lines(config, address)
    _write(lines[:1])
    made = loader()
    _printed = True
    _write(lines[1:])
    return made


def _write(lines: list[str]) -> None:
    sys.stdout.write("".join(line + "\n" for line in lines))
    sys.stdout.flush()


def mark_printed() -> None:
    global _printed
    _printed = True


# -- worker start and worker exit ---------------------------------------------------------


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


def start_worker(service: Service) -> None:
    """Run the start callbacks, once per process (a fork resets the guard)."""
    global _callbacks_run_in
    with _lock:
        if _callbacks_run_in == os.getpid():
            return
        _callbacks_run_in = os.getpid()
        callbacks = list(_starts)
    for callback in callbacks:
        callback(service)


def worker_exited(pid: int) -> None:
    with _lock:
        callbacks = list(_exits)
    for callback in callbacks:
        callback(pid)


def start_process(service: Service) -> None:
    """Run the per-worker callbacks, then the function's ``start()``, once per process.

    A ``start()`` that raises becomes a :class:`StartupError` naming the
    hook, the file and the exception, with the user's traceback.
    """
    global _started_in
    if _started_in == os.getpid():
        return
    _started_in = os.getpid()
    if service.config.server_debug_port:
        listen_for_debugger(service.config)
    start_worker(service)
    run_start_hook(service)
    # Everything made so far (modules, the stack, what start() built) lives as long as the
    # process: out of the collector's sight, the collections that calls trigger stay
    # small, and forked workers keep sharing those pages instead of copying them.
    gc.freeze()
    resume_collector()  # the thresholds from before `funcwsgi serve` held the collector back, if it did
    set_gc_threshold(gc_threshold(service))


#: The Debug Adapter Protocol server that SERVER_DEBUG_PORT starts.
DEBUGGER = "debugpy"


def listen_for_debugger(config: Config) -> None:
    """Open ``SERVER_DEBUG_PORT`` for a debugger in this (the serving) process; calls go on meanwhile.

    debugpy's adapter answers the Debug Adapter Protocol there; nothing waits
    for a client to attach. Off loopback, whoever reaches the port can run
    any code in the process: that is said at start-up.
    """
    import ipaddress
    import logging

    host, port = config.server_debug_host, config.server_debug_port
    try:
        import debugpy
    except ImportError:
        raise StartupError(f"SERVER_DEBUG_PORT={port} needs {DEBUGGER}, which is not installed: pip install 'funcwsgi[debug]'") from None
    try:
        debugpy.listen((host, port))
    except Exception as error:  # debugpy raises RuntimeError with the adapter's own message
        raise StartupError(f"cannot listen for a debugger on SERVER_DEBUG_HOST={host!r} SERVER_DEBUG_PORT={port}: {error}") from None
    if not ipaddress.ip_address(host).is_loopback:
        logging.getLogger(LOGGER).warning(
            "SERVER_DEBUG_HOST=%s: the debugger port %d is open beyond this machine; whoever reaches it can run any code in the function's process",
            host,
            port,
        )
    logging.getLogger(LOGGER).info(
        "Debugger (%s) listening on %s:%d, pid %d: attach a Debug Adapter Protocol client (docs/servers.md#debugging)", DEBUGGER, host, port, os.getpid()
    )


#: SERVER_GC_THRESHOLD's default for a function served on an event loop.
LOOP_GC_THRESHOLD = 100_000


def gc_threshold(service: Service) -> int:
    """SERVER_GC_THRESHOLD, or :data:`LOOP_GC_THRESHOLD` for a function on the loop when the setting is not given.

    Every collection of the youngest generation scans the objects of the calls in flight that
    were made since the one before; on the loop, with 400 calls in flight, a collection every
    10,000 allocations cost an I/O-bound call 43,000 of its 298,000 instructions
    (docs/performance.md#garbage-collection).
    """
    config = service.config
    if service.on_loop and "server_gc_threshold" not in config.given:
        return LOOP_GC_THRESHOLD
    return config.server_gc_threshold


def set_gc_threshold(threshold: int) -> None:
    """Collect the youngest generation every ``threshold`` allocations (0: Python's own threshold).

    A call frees what it made by reference counting alone (tests/handler/test_calling.py
    checks it leaves no cycles), but the collector counts allocations net of frees,
    never below zero: with hundreds of calls in flight on one loop their objects come
    and go in waves, each wave counts, and at Python's 700 every collection scans the
    objects of all the calls in flight, which cost an I/O-bound call a sixth of its
    instructions at 400 connections (docs/performance.md#garbage-collection).
    """
    if threshold:
        gc.set_threshold(threshold, *gc.get_threshold()[1:])


# -- the collector, held back while a server starts ----------------------------------------

#: The youngest generation's threshold while held: above what a plain function's start allocates.
HELD_GC_THRESHOLD = 100_000

_gc_given_back: tuple[int, int, int] | None = None  # the thresholds to return to, while held


def hold_collector() -> None:
    """Collect at most every :data:`HELD_GC_THRESHOLD` allocations until :func:`resume_collector`.

    What a start-up makes (modules, classes, the settings, the loaded function,
    the stack) lives as long as the process, so the collections its allocations
    trigger find almost nothing to free: at Python's threshold of 700 they were 4%
    of the instructions from spawning ``funcwsgi serve`` on gunicorn to its first
    answer (docs/performance.md#fifth-round-the-collector-held-back-while-starting).
    ``funcwsgi serve`` holds it back first thing; each process gives it back once
    started: a serving process in :func:`start_process`, a master before it forks
    its workers. Held back is never off: a process that never resumes collects as
    often as a function on gunicorn's event loop does by default.
    """
    global _gc_given_back
    if _gc_given_back is not None:
        return
    threshold = gc.get_threshold()
    _gc_given_back = threshold
    if threshold[0] < HELD_GC_THRESHOLD:
        gc.set_threshold(HELD_GC_THRESHOLD, *threshold[1:])


def collector_held() -> bool:
    return _gc_given_back is not None


def resume_collector() -> None:
    """Freeze what was made while held, then collect at the thresholds from before :func:`hold_collector`.

    Freezing first moves the start-up's objects out of every collection (and
    resets the youngest generation's count), so the threshold given back does
    not begin with one collection over everything the start-up made.
    """
    global _gc_given_back
    if _gc_given_back is None:
        return
    gc.freeze()
    gc.set_threshold(*_gc_given_back)
    _gc_given_back = None


# -- stop ---------------------------------------------------------------------------------


def stop_process(service: Service) -> None:
    """Run the function's ``stop()`` once per process; a failure is logged, never raised."""
    global _stopped_in
    if _stopped_in == os.getpid():
        return
    _stopped_in = os.getpid()
    run_stop_hook(service)


# -- the function's own hooks, for each process and for funcwsgi.testing's client ---------


def run_start_hook(service: Service) -> None:
    """The function's ``start()``, if it has one; a failure is a :class:`StartupError`."""
    hook = service.loaded.hooks.get("start")
    if hook is None:
        return
    try:
        _call(hook)
    except BaseException as error:  # the user's code may raise anything, SystemExit included
        from .handler.loader import user_traceback

        raise StartupError(
            f"start() in {service.loaded.path} raised {type(error).__name__}: {error}",
            user_traceback(error, service.loaded.path),
        ) from None


def run_stop_hook(service: Service) -> None:
    """The function's ``stop()``, if it has one; a failure is logged, never raised."""
    hook = service.loaded.hooks.get("stop")
    if hook is None:
        return
    try:
        _call(hook)
    except BaseException:
        import logging

        logging.getLogger(LOGGER).error("stop() in %s raised", service.loaded.path, exc_info=True)


def _call(hook: Callable[[], Any]) -> None:
    result = hook()
    import inspect

    if inspect.isawaitable(result):
        import asyncio  # only for async hooks: a sync function's server never imports it

        asyncio.run(_awaited(result))


async def _awaited(awaitable: Any) -> None:
    await awaitable
