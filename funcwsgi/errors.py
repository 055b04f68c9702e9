"""Errors that stop start-up. Each prints as one readable line and exits 2."""

from __future__ import annotations

import sys

EXIT_STARTUP_ERROR = 2


class StartupError(Exception):
    """Start-up cannot go on. ``str(error)`` is the one line shown to the user.

    ``user_traceback`` holds the formatted traceback of an exception raised by
    the user's own code (a failing import, a raising ``start()`` hook); the
    runtime's own frames are never shown.
    """

    def __init__(self, message: str, user_traceback: str | None = None) -> None:
        super().__init__(message)
        self.user_traceback = user_traceback


class ConfigError(StartupError):
    """A setting has a bad value."""


class LoadError(StartupError):
    """The function could not be loaded."""


def report_and_exit(error: StartupError) -> None:
    """Print the error as one line (then the user's traceback, if any) and exit 2."""
    sys.stdout.flush()
    print(f"funcwsgi: error: {error}", file=sys.stderr)
    if error.user_traceback:
        print(error.user_traceback.rstrip(), file=sys.stderr)
    sys.stderr.flush()
    raise SystemExit(EXIT_STARTUP_ERROR)
