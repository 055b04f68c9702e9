"""The configuration of the service this process serves, for the ``sdk`` to read.

A server builds its service once; building it makes its configuration the
active one. Outside a server (a function's unit tests) there is none, and the
sdk reads the environment instead, each time, so a test can change it.
"""

from __future__ import annotations

from .config import Config

_config: Config | None = None


def activate(config: Config) -> None:
    global _config
    _config = config


def active_config() -> Config:
    """The served configuration, else one read from ``os.environ`` now."""
    return _config if _config is not None else Config.from_env()
