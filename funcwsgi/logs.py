"""Log set-up, done once per process."""

from __future__ import annotations

import logging
import sys

from .config import Config

_configured = False
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def configure_logging(config: Config) -> None:
    """Send the runtime's and the function's log records to stdout, once."""
    global _configured
    if _configured:
        return
    _configured = True
    root = logging.getLogger()
    if not root.handlers:
        handler = logging.StreamHandler(sys.stdout)
        handler.setFormatter(logging.Formatter(TEXT_FORMAT))
        root.addHandler(handler)
    root.setLevel(config.server_log_level.upper())
