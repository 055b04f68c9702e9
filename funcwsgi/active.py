"""The configuration of the service this process serves, for the ``sdk`` to read.

Inside a call, the configuration of the service serving it (the service puts
it in the environ). Outside a call, the service a server built (building one
makes its configuration the active one). Without a server (a function's unit
tests) there is none, and the environment is read instead, each time, so a
test can change it.
"""

from __future__ import annotations

from .config import Config
from .context import current_environ

#: Where a service leaves its configuration for the calls it serves.
CONFIG_KEY = "funcwsgi.config"

_config: Config | None = None


def activate(config: Config) -> None:
    global _config
    _config = config


def active_config() -> Config:
    """The configuration of the current call's service, else the served one, else ``os.environ``'s."""
    environ = current_environ.get()
    if environ is not None:
        config = environ.get(CONFIG_KEY)
        if config is not None:
            return config  # type: ignore[no-any-return]
    return _config if _config is not None else Config.from_env()
