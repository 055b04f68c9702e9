"""Fission's python environment: a runtime that starts empty and is specialised to a function.

Fission starts the environment's container with no function; its fetcher
copies the function into the shared volume (``/userfunc``, ``USERFUNCVOL``)
and then asks the runtime to load it: ``POST /specialize`` loads
``/userfunc/user``'s ``main``; ``POST /v2/specialize`` with ``{"filepath":
..., "functionName": ...}`` loads a single file or a package folder
(``module.function``, default ``main.main``). Until then calls get 500, as
Fission's own server answers. The function is ``main()`` reading
``flask.request`` (the router's ``X-Fission-Params-*`` headers included),
called inside a Flask request context as Fission's server calls it
(docs/migration-fission.md).
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import logging
import os
import sys
import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from ..errors import LoadError
from ..handler.signatures import Invoker, Signature
from ..replies import Reply
from .signals import FISSION_VOLUME as DEFAULT_VOLUME

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIEnvironment

    from ..config import Config
    from ..handler.loader import LoadedFunction

log = logging.getLogger("funcwsgi.fission")

NOT_SPECIALISED = Reply(500, "Internal Server Error")
SPECIALISED = Reply(200)
FAILED = Reply(500, "Internal Server Error")
BAD_REQUEST = Reply(400, "expected a JSON object with filepath and functionName")


def volume(config: Config) -> str:
    return config.fission_userfunc_volume or DEFAULT_VOLUME


def locate(config: Config) -> Config:
    if config.server_workers > 1:
        # Fission specialises a pod with one call: only the process answering it would load the function.
        raise LoadError(
            f"SERVER_WORKERS={config.server_workers} is refused for a Fission environment: /specialize reaches one process only; "
            "use SERVER_WORKERS=1 and SERVER_NUMTHREADS for concurrency"
        )
    return config.replace(handler_folder=volume(config), handler_module_name="user", handler_function_name="main")


def load(config: Config) -> LoadedFunction:
    """Nothing to load yet: the function comes with the specialise call.

    The specialise calls are the contract's own routes, answered before the
    layers that time and count calls: loading a function is no call of it, and
    one whose imports take longer than ``SERVER_CALL_TIMEOUT`` loads all the same
    (Fission bounds it with its own specialisation timeout).
    """
    from ..handler.loader import LoadedFunction

    specialiser = Specialiser(config)
    routes = {"/specialize": specialiser.specialise_v1, "/v2/specialize": specialiser.specialise_v2}
    return LoadedFunction(function=specialiser, signature=Signature.NONE, name="main", path=volume(config), folder=volume(config), routes=routes)


def _import_file(path: str) -> Any:
    """Import a source file whatever its name (Fission's archives are often named without .py)."""
    loader = importlib.machinery.SourceFileLoader("user", path)
    spec = importlib.util.spec_from_loader("user", loader)
    if spec is None:  # pragma: no cover - SourceFileLoader always gives one
        raise LoadError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules["user"] = module
    try:
        loader.exec_module(module)
    except Exception as error:
        raise LoadError(f"importing {path} raised {type(error).__name__}: {error}") from None
    return module


def load_user_function(filepath: str, handler: str) -> tuple[Callable[..., Any], Any, str]:
    """(function, module, where) for Fission's filepath and functionName."""
    module_name, _, function_name = handler.rpartition(".")
    if not handler:
        module_name, function_name = "main", "main"
    elif not module_name:
        module_name = "main"
    if os.path.isdir(filepath):
        if filepath not in sys.path:
            sys.path.append(filepath)
        try:
            module = importlib.import_module(module_name)
        except Exception as error:
            raise LoadError(f"importing {module_name} from {filepath} raised {type(error).__name__}: {error}") from None
    elif os.path.isfile(filepath):
        module = _import_file(filepath)
    else:
        raise LoadError(f"filepath {filepath!r} does not exist")
    function = getattr(module, function_name, None)
    if not callable(function):
        raise LoadError(f"no function {function_name!r} in {getattr(module, '__file__', filepath)}")
    return function, module, f"{getattr(module, '__file__', filepath)}:{function_name}"


class Specialiser:
    """Answers the specialise calls, then every call with the loaded function."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.volume = volume(config)
        self.call: Invoker[None] | None = None
        self.lock = threading.Lock()

    def specialise(self, filepath: str, handler: str) -> None:
        from ..handler.loader import LoadedFunction, imported_modules
        from .flask import invoker as flask_invoker

        function, module, where = load_user_function(filepath, handler)
        loaded = LoadedFunction(
            function=function, signature=Signature.NONE, name=getattr(function, "__name__", "main"), path=where,
            module=module, imports=imported_modules(module), folder=os.path.dirname(getattr(module, "__file__", filepath)),
        )
        # Fission's server calls the function with no arguments inside Flask's request context.
        call = flask_invoker(loaded, function)
        with self.lock:
            self.call = call
        log.info("Specialised to %s", where)

    def __call__(self, environ: dict[str, Any]) -> tuple[Any, None]:
        if self.call is None:
            log.error("called before /specialize or /v2/specialize loaded a function")
            return NOT_SPECIALISED, None
        return self.call(environ)

    def specialise_v1(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        """``POST /specialize``: the volume's ``user`` file and its ``main``."""
        return self._specialised(os.path.join(self.volume, "user"), "main")(environ, start_response)

    def specialise_v2(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        """``POST /v2/specialize``: the file or folder and the function its JSON body names."""
        # Within SERVER_MAX_BODY_SIZE, a chunked body spooled with its length: the stack wraps the route in that layer.
        length = str(environ.get("CONTENT_LENGTH") or "0")
        try:
            info = json.loads(environ["wsgi.input"].read(int(length)) if length.isdigit() else b"")
            filepath, handler = str(info["filepath"]), str(info.get("functionName") or "")
        except (ValueError, KeyError, TypeError, AttributeError):
            return BAD_REQUEST(environ, start_response)
        return self._specialised(filepath, handler)(environ, start_response)

    def _specialised(self, filepath: str, handler: str) -> Reply:
        try:
            self.specialise(filepath, handler)
        except LoadError as error:
            log.error("specialising failed: %s", error)
            return FAILED
        return SPECIALISED


def invoker(loaded: LoadedFunction, config: Config, function: Callable[..., Any]) -> Invoker[None]:
    specialiser = loaded.function
    if not isinstance(specialiser, Specialiser):  # pragma: no cover - load() always makes one
        raise LoadError("the fission contract needs its own loader")
    return specialiser
