"""gunicorn's configuration for a worker, each setting looked up once.

gunicorn keeps its settings in ``Config.settings`` and answers ``cfg.name``
through ``Config.__getattr__``, which runs after the normal attribute lookup
has failed. Its gthread worker and its HTTP parser read about 25 settings
that way for every request (the limits, the hooks, ``forwarded_allow_ips``
and the h2c checks twice each). A worker's settings do not change once it
has forked (a reload starts new workers), so :class:`SettingsReadOnce` keeps
each value it has answered as an ordinary attribute, which the next read
finds without a miss. ``set()`` still works and forgets what it changes.
"""

from __future__ import annotations

from typing import Any

from gunicorn.config import Config


class SettingsReadOnce(Config):  # type: ignore[misc]  # gunicorn is untyped: its classes are Any
    """The settings of ``source`` (the very same ``Setting`` objects), remembered once read."""

    def __init__(self, source: Any) -> None:
        super().__init__(source.usage, source.prog)
        self.settings = source.settings

    def __getattr__(self, name: str) -> Any:
        value = super().__getattr__(name)
        # Config.__setattr__ refuses a setting's name (set() is the way to change one);
        # this is a copy of what set() holds, so it goes into the instance's dict directly.
        self.__dict__[name] = value
        return value

    def set(self, name: str, value: Any) -> None:
        super().set(name, value)
        self.__dict__.pop(name, None)
