"""gunicorn's own lines as funcwsgi's log records: the ``logger_class`` that ``funcwsgi serve`` gives gunicorn.

gunicorn's default (``gunicorn.glogging.Logger``) writes its lines to stderr
in a format of its own, and importing it imports ``logging.config``,
``logging.handlers``, ``socketserver`` and ``pickle`` for the log files,
syslog and logging configuration files that ``funcwsgi serve`` never sets:
about 18 million instructions of every cold start, 4% of it (issue 44).

gunicorn documents ``logger_class`` as the place for a class that "quacks
like" its own. This one hands gunicorn's messages to the ``gunicorn.error``
logger, which propagates them to the handler that
:func:`funcwsgi.logs.configure_logging` installed: one JSON object per line
on stdout (``"logger": "gunicorn.error"``), like every other record, or
``SERVER_LOG_FORMAT=text`` lines. ``gunicorn funcwsgi:app`` keeps gunicorn's
own logger and every logging option it has.
"""

from __future__ import annotations

import logging
from typing import Any

#: gunicorn's ``loglevel`` names, as its own logger reads them.
LEVELS = {
    "critical": logging.CRITICAL,
    "error": logging.ERROR,
    "warning": logging.WARNING,
    "info": logging.INFO,
    "debug": logging.DEBUG,
}


class ServerLog:
    """What gunicorn's arbiter and workers call on their logger, written to funcwsgi's logging."""

    def __init__(self, cfg: Any) -> None:
        self.error_log = logging.getLogger("gunicorn.error")
        self.access_log = logging.getLogger("gunicorn.access")
        # The logger's own methods, not wrappers: a record then names gunicorn's code as its caller.
        self.critical = self.error_log.critical
        self.error = self.error_log.error
        self.warning = self.error_log.warning
        self.info = self.error_log.info
        self.debug = self.error_log.debug
        self.exception = self.error_log.exception
        self.setup(cfg)

    def setup(self, cfg: Any) -> None:
        """Also run by gunicorn when SIGHUP reloads its configuration."""
        self.cfg = cfg
        self.error_log.setLevel(LEVELS.get(str(cfg.loglevel).lower(), logging.INFO))

    def log(self, level: int | str, msg: object, *args: Any, **kwargs: Any) -> None:
        if isinstance(level, str):
            level = LEVELS.get(level.lower(), logging.INFO)
        self.error_log.log(level, msg, *args, **kwargs)

    def access(self, resp: Any, req: Any, environ: Any, request_time: Any) -> None:
        """Nothing: funcwsgi's access-log layer writes a call's line (``SERVER_ACCESS_LOG``), on every server alike."""

    def reopen_files(self) -> None:
        """Nothing to reopen on SIGUSR1: the records go to the process's stdout, never to a file of gunicorn's."""

    def close_on_exec(self) -> None:
        """Nothing: no file of this logger's may leak into a process gunicorn executes."""
