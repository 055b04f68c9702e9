"""funcwsgi: a Python runtime for serverless functions.

``funcwsgi:app`` is the WSGI application for the function the environment
names; it is built on first access, so importing this package does no work::

    gunicorn funcwsgi:app

``make_app()`` builds one around a given callable, for mounting elsewhere.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .application import FunctionService, make_app
    from .config import Config
    from .errors import ConfigError, LoadError, StartupError
    from .request import FunctionRequest
    from .response import FunctionResponse

__version__ = "0.1.0"

__all__ = [
    "Config",
    "ConfigError",
    "FunctionRequest",
    "FunctionResponse",
    "FunctionService",
    "LoadError",
    "StartupError",
    "app",
    "make_app",
]

if TYPE_CHECKING:
    app: FunctionService

#: Where each public name is defined: imported when first asked for, so that `funcwsgi serve`
#: holds the garbage collector back (funcwsgi.process.hold_collector) before the request path is imported.
_DEFINED_IN = {
    "Config": "config",
    "ConfigError": "errors",
    "FunctionRequest": "request",
    "FunctionResponse": "response",
    "FunctionService": "application",
    "LoadError": "errors",
    "StartupError": "errors",
    "make_app": "application",
}


def __getattr__(name: str) -> Any:
    # PEP 562: `funcwsgi.app` is built from the environment when first asked for,
    # which is when a server loads it, before it serves.
    if name == "app":
        from .application import default_app

        return default_app()
    module = _DEFINED_IN.get(name)
    if module is None:
        raise AttributeError(f"module 'funcwsgi' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
