"""Building the WSGI application: from the environment, or around a given callable."""

from __future__ import annotations

import atexit
import errno
import logging
import os
import socket
import stat
import sys
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from .compat import load_function, resolve
from .config import Config, Listening, listening_config, listening_words
from .current import activate
from .environ import CONFIG_KEY
from .errors import StartupError, print_startup_error, report_and_exit
from .loader import LoadedFunction, wrap_callable
from .logs import configure_logging
from .process import mark_printed, print_startup_lines, start_process, stop_process
from .stack import build_stack, direct, serves_on_loop

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIEnvironment

log = logging.getLogger("funcwsgi")


class FunctionService:
    """A loaded function wrapped in its middleware stack: a WSGI application.

    ``config`` and ``loaded`` stay reachable for the servers and the CLI
    (hooks, settings); calling the object serves a request.
    """

    def __init__(self, config: Config, loaded: LoadedFunction) -> None:
        self.config = config
        self.loaded = loaded
        self.wsgi, built = build_stack(config, loaded)
        self._call_stack = direct(self.wsgi)
        #: The layers' names from the outside in, ``function`` last.
        self.layers = [layer.name for layer in built] + ["function"]
        #: The same, with the options whose setting is not the default: what the start-up log shows.
        self.described = [layer.describe(config) for layer in built] + ["function"]
        #: Whether the event-loop path serves it (an async function, SERVER_EVENT_LOOP=auto).
        self.on_loop = serves_on_loop(config, loaded)
        self._asgi: Any = None
        activate(config)

    @property
    def asgi(self) -> Any:
        """The same service as an ASGI application (:mod:`funcwsgi.eventloop.asgi`), made on first use."""
        if self._asgi is None:
            from .eventloop.asgi import AsgiService

            self._asgi = AsgiService(self)
        return self._asgi

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Any:
        # The sdk reads the metadata of the service serving the call (several may be mounted).
        environ[CONFIG_KEY] = self.config
        return self._call_stack(environ, start_response)

    def __repr__(self) -> str:
        return f"<FunctionService {self.loaded.path}:{self.loaded.name} [{' > '.join(self.layers)}]>"


def make_app(
    function: Callable[..., Any] | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    **overrides: Any,
) -> FunctionService:
    """A WSGI app serving ``function``, or the function the environment names.

    ``overrides`` are settings by field name (``handler_folder="./fn"``,
    ``server_call_timeout=5``); they win over ``environ`` (default
    ``os.environ``). Mount the result anywhere: ``SCRIPT_NAME`` is honoured,
    and the function sees the path below the mount point.

    Raises :class:`~funcwsgi.errors.StartupError` for bad settings or a
    function that cannot be loaded.
    """
    config = resolve(Config.from_env(environ, **overrides)) if function is None else Config.from_env(environ, **overrides)
    loaded = load_function(config) if function is None else wrap_callable(function, config)
    service = build_service(config, loaded)
    log_stack(service)
    return service


def build_service(config: Config, loaded: LoadedFunction) -> FunctionService:
    configure_logging(config)
    return FunctionService(config, loaded)


def log_stack(service: FunctionService) -> None:
    log.info("Middleware stack: %s", " > ".join(service.described))


_default: FunctionService | None = None
_default_lock = threading.Lock()


def default_app(config: Config | None = None) -> FunctionService:
    """The app that ``funcwsgi:app`` names, built on first use from ``config`` (default: ``os.environ``).

    Servers that have already read the configuration pass it, so the
    environment is parsed once. A bad setting or a function that cannot be
    loaded prints one line and exits with status 2 (3 in a plain gunicorn's
    worker: :func:`serve_in_plain_gunicorn`).
    """
    global _default
    if _default is None:
        with _default_lock:
            if _default is None:
                plain = config is None and in_plain_gunicorn()
                try:
                    settings = resolve(Config.from_env() if config is None else config)
                    if plain:
                        _default = serve_in_plain_gunicorn(settings)
                    else:
                        _default = print_startup_lines(settings, lambda: build_service(settings, load_function(settings)))
                        log_stack(_default)
                    if _default.config.server_metrics and _default.config.server_metrics_port:
                        from .metrics.port import serve_metrics_port

                        serve_metrics_port(_default.config)
                except StartupError as error:
                    if plain:
                        print_startup_error(error)
                        sys.exit(GUNICORN_BOOT_ERROR)
                    report_and_exit(error)
    return _default


# -- gunicorn without funcwsgi's gunicorn settings: `gunicorn [--bind H:P] [-w N] [--threads N] funcwsgi:app` --
# The core imports no adapter: gunicorn and funcwsgi's settings module are recognised by name.

#: The command that serves ``funcwsgi:app`` with gunicorn and the runtime's settings.
GUNICORN_COMMAND = "gunicorn -c python:funcwsgi.gunicorn_conf funcwsgi:app"
#: The module that holds those settings, imported (under either of its names) by a gunicorn that read them.
GUNICORN_SETTINGS_MODULE = "funcwsgi.adapters.gunicorn_conf"
#: funcwsgi's gunicorn worker class, which applies the slow-client settings itself when named with ``-k``.
GUNICORN_WORKER_MODULE = "funcwsgi.adapters.gunicorn_worker"
#: The exit status gunicorn's master takes for "worker failed to boot": it stops instead of starting another worker.
GUNICORN_BOOT_ERROR = 3
#: Settings only funcwsgi's gunicorn settings (or its worker class, the second group) apply.
GUNICORN_SETTINGS = (
    "SERVER_WORKERS", "SERVER_NUMTHREADS", "SERVER_GRACEFUL_TIMEOUT", "SERVER_MAX_REQUESTS", "SERVER_KEEPALIVE_TIMEOUT", "SERVER_METRICS_PORT",
)
WORKER_SETTINGS = ("SERVER_HEADER_TIMEOUT", "SERVER_BODY_TIMEOUT", "SERVER_SEND_TIMEOUT", "SERVER_MAX_CONNECTIONS", "SERVER_MAX_INFLIGHT")


def in_plain_gunicorn() -> bool:
    """Whether a gunicorn that did not read :mod:`funcwsgi.gunicorn_conf` is loading ``funcwsgi:app``."""
    return "gunicorn.arbiter" in sys.modules and GUNICORN_SETTINGS_MODULE not in sys.modules


def serve_in_plain_gunicorn(settings: Config) -> FunctionService:
    """The service for a gunicorn run with its own options only, as any WSGI app is run.

    Its ``--bind``, ``-w`` and ``--threads`` are the user's words. Such a
    gunicorn loads the app in each worker, after binding: the start-up line
    names the listening sockets the worker holds, and an explicitly set
    ``SERVER_HOST``/``SERVER_PORT`` that none matches stops the server
    (:func:`~funcwsgi.config.listening_config`). The worker runs the function's
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
        ours = GUNICORN_WORKER_MODULE in sys.modules  # gunicorn -k funcwsgi.adapters.gunicorn_worker.FunctionWorker
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
        os._exit(GUNICORN_BOOT_ERROR)  # in a fork handler, an exception would only be printed


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
