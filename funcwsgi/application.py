"""Building the WSGI application: from the environment, or around a given callable."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, cast

from .compat import load_function, resolve
from .config import Config
from .current import activate
from .environ import CONFIG_KEY
from .errors import StartupError, report_and_exit
from .handler.loader import LoadedFunction, wrap_callable
from .logs import configure_logging
from .process import print_startup_lines
from .serving import loaded_by_its_own_command
from .stack import build_stack, called, serves_on_loop

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
        self.call_stack = called(self.wsgi)  # called inline, as each layer calls the next (stack.called)
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
        return self.call_stack(environ, start_response)

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
    loaded prints one line and exits with status 2, or as the server that
    loads the app by its own command wants (:func:`funcwsgi.serving.loaded_by_its_own_command`:
    ``gunicorn funcwsgi:app``).
    """
    global _default
    if _default is None:
        with _default_lock:
            if _default is None:
                alone = loaded_by_its_own_command() if config is None else None
                try:
                    settings = resolve(Config.from_env() if config is None else config)
                    if alone is not None:
                        _default = cast(FunctionService, alone.build_app(settings))  # the hook builds it with build_service
                    else:
                        _default = print_startup_lines(settings, lambda: build_service(settings, load_function(settings)))
                        log_stack(_default)
                    if _default.config.server_metrics and _default.config.server_metrics_port:
                        from .metrics.port import serve_metrics_port

                        serve_metrics_port(_default.config)
                except StartupError as error:
                    if alone is not None:
                        alone.startup_failed(error)
                    report_and_exit(error)
    return _default
