"""What belongs to the call being served, and the configuration of the service serving it.

``current_environ`` is a :class:`~contextvars.ContextVar` rather than a
thread-local, so it follows the call into ``async`` functions and into threads
started with a copied context (as the call-timeout layer does).

The configuration, for the ``sdk`` to read: inside a call, the configuration
of the service serving it (the service puts it in the environ). Outside a
call, the service a server built (building one makes its configuration the
active one). Without a server (a function's unit tests) there is none, and the
environment is read instead, each time, so a test can change it.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

from .config import Config
from .environ import CONFIG_KEY

#: The WSGI environ of the call being served, or ``None`` outside a call.
current_environ: ContextVar[dict[str, Any] | None] = ContextVar("funcwsgi.environ", default=None)

_config: Config | None = None


def activate(config: Config) -> None:
    global _config
    _config = config


def active_config() -> Config:
    """The configuration of the current call's service, else the served one, else ``os.environ``'s."""
    environ = current_environ.get()
    if environ is not None:
        config: Config | None = environ.get(CONFIG_KEY)
        if config is not None:
            return config
    return _config if _config is not None else Config.from_env()
