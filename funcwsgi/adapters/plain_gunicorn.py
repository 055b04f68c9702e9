"""``gunicorn [--bind H:P] [-w N] [--threads N] funcwsgi:app``: gunicorn run by its own command.

Such a gunicorn reads none of funcwsgi's gunicorn settings and runs none of
its hooks; it loads ``funcwsgi:app`` as any WSGI app. The app's lazy lookup
(:func:`funcwsgi.application.default_app`) finds this module through the
gunicorn row of :mod:`funcwsgi.adapters.specs`
(:func:`funcwsgi.serving.loaded_by_its_own_command`) and calls
:func:`build_app`, or :func:`startup_failed` when start-up fails.
"""

from __future__ import annotations

import atexit
import errno
import os
import socket
import stat
import sys
from typing import NoReturn

from funcwsgi.adapters.gunicorn import WORKER_BOOT_ERROR
from funcwsgi.adapters.gunicorn_bind import Listening, listening_config, listening_words
from funcwsgi.application import FunctionService, build_service, log_stack
from funcwsgi.compat import load_function
from funcwsgi.config import Config
from funcwsgi.errors import StartupError, print_startup_error
from funcwsgi.process import mark_printed, print_startup_lines, start_process, stop_process

#: The command that serves ``funcwsgi:app`` with gunicorn and the runtime's settings.
GUNICORN_COMMAND = "gunicorn -c python:funcwsgi.gunicorn_conf funcwsgi:app"
#: The module that holds those settings, imported (under either of its names) by a gunicorn that read them.
GUNICORN_SETTINGS_MODULE = "funcwsgi.adapters.gunicorn_conf"
#: funcwsgi's gunicorn worker class, which applies the slow-client settings itself when named with ``-k``.
GUNICORN_WORKER_MODULE = "funcwsgi.adapters.gunicorn.worker"
#: Settings only funcwsgi's gunicorn settings (or its worker class, the second group) apply.
GUNICORN_SETTINGS = (
    "SERVER_WORKERS",
    "SERVER_NUMTHREADS",
    "SERVER_GRACEFUL_TIMEOUT",
    "SERVER_MAX_REQUESTS",
    "SERVER_KEEPALIVE_TIMEOUT",
    "SERVER_METRICS_PORT",
)
WORKER_SETTINGS = ("SERVER_HEADER_TIMEOUT", "SERVER_BODY_TIMEOUT", "SERVER_SEND_TIMEOUT", "SERVER_MAX_CONNECTIONS", "SERVER_MAX_INFLIGHT")


def loading_alone() -> bool:
    """Whether the gunicorn loading ``funcwsgi:app`` did not read :mod:`funcwsgi.gunicorn_conf`."""
    return GUNICORN_SETTINGS_MODULE not in sys.modules


def startup_failed(error: StartupError) -> NoReturn:
    """One line, then gunicorn's boot-error status: its master stops instead of starting worker after worker."""
    print_startup_error(error)
    sys.exit(WORKER_BOOT_ERROR)


def build_app(settings: Config) -> FunctionService:
    """The service for a gunicorn run with its own options only, as any WSGI app is run.

    Its ``--bind``, ``-w`` and ``--threads`` are the user's words. Such a
    gunicorn loads the app in each worker, after binding: the start-up line
    names the listening sockets the worker holds, and an explicitly set
    ``SERVER_HOST``/``SERVER_PORT`` that none matches stops the server
    (:func:`~funcwsgi.adapters.gunicorn_bind.listening_config`). The worker runs the function's
    ``start()`` now and ``stop()`` at exit, since no hook of ours runs. With
    ``--preload`` the master loads it before binding: the line cannot name the
    address, and each worker runs ``start()`` once forked. A start-up error
    exits with gunicorn's boot-error status, so its master stops instead of
    starting worker after worker.
    """
    listening = listening_sockets()
    if listening:
        settings = listening_config(settings, listening)
    # Each worker would try to bind its own metrics port: metrics stay on the calls' port.
    settings = settings.replace(server_metrics_port=0)
    address = ", ".join(listening_words(item) for item in listening) or "on gunicorn's bind"
    speaks = first_worker_to_speak(address)
    if not speaks:
        mark_printed()
    service = print_startup_lines(settings, lambda: build_service(settings, load_function(settings)), address)
    if speaks:
        log_stack(service)
        ours = GUNICORN_WORKER_MODULE in sys.modules  # gunicorn -k funcwsgi.adapters.gunicorn.worker.HttpEdgeWorker
        unapplied = [*GUNICORN_SETTINGS, *([] if ours else [*WORKER_SETTINGS, "funcwsgi's worker class"]), "its server hooks"]
        print(
            f"funcwsgi: warning: gunicorn runs with its own settings only: {', '.join(unapplied[:-1])} and {unapplied[-1]} "
            f"do not apply; to apply them run `{GUNICORN_COMMAND}` or `funcwsgi serve`",
            file=sys.stderr,
            flush=True,
        )
    if listening:
        serve_in_this_process(service)
    else:
        os.register_at_fork(after_in_child=lambda: serve_in_forked_worker(service))
    return service


_spoken: list[socket.socket] = []


def first_worker_to_speak(address: str) -> bool:
    """Whether this is the first of its master's workers to load the app: it prints the lines, the others stay quiet.

    The first binds an abstract Unix socket named after the master and the
    address, held while it lives (Linux; one name per network namespace, where
    the address is unique). Elsewhere every worker speaks.
    """
    marker = socket.socket(socket.AF_UNIX)
    try:
        marker.bind(f"\0funcwsgi-gunicorn-{os.getppid()}-{address}")
    except OSError as error:
        marker.close()
        return error.errno != errno.EADDRINUSE
    _spoken.append(marker)
    return True


def serve_in_this_process(service: FunctionService) -> None:
    """The function's ``start()`` now, in the process that serves, and its ``stop()`` when it exits."""
    start_process(service)
    atexit.register(stop_process, service)


def serve_in_forked_worker(service: FunctionService) -> None:
    try:
        serve_in_this_process(service)
    except StartupError as error:
        print_startup_error(error)
        os._exit(WORKER_BOOT_ERROR)  # in a fork handler, an exception would only be printed


def listening_sockets() -> list[Listening]:
    """The addresses of the listening sockets this process holds: in a gunicorn worker, the ones its master bound."""
    found: list[Listening] = []
    try:
        descriptors = sorted(os.listdir("/dev/fd"), key=int)
    except OSError:  # no /dev/fd (nor /proc): the start-up line cannot name the address
        return found
    for name in descriptors:
        try:
            if not stat.S_ISSOCK(os.fstat(int(name)).st_mode):
                continue
            sock = socket.socket(fileno=int(name))
        except OSError:  # the listing's own descriptor, closed by now
            continue
        try:
            if sock.type == socket.SOCK_STREAM and sock.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN):
                address = sock.getsockname()
                found.append(f"unix:{address}" if sock.family == socket.AF_UNIX else (address[0], address[1]))
        except OSError:
            pass
        finally:
            sock.detach()  # the descriptor stays the server's
    return found
