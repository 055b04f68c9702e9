"""Errors that stop start-up. Each prints as one readable line and exits 2."""

from __future__ import annotations

import sys
from typing import NoReturn

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


def print_startup_error(error: StartupError) -> None:
    """The one way a start-up error is shown: one line on stderr, then the user's traceback, if any."""
    sys.stdout.flush()  # what the server printed before comes first
    # One write of whole lines: the gunicorn arbiter writes to the same stderr at the same moment.
    text = f"funcwsgi: error: {error}\n"
    if error.user_traceback:
        text += error.user_traceback.rstrip() + "\n"
    sys.stderr.write(text)
    sys.stderr.flush()


def report_and_exit(error: StartupError) -> NoReturn:
    """Print the error (:func:`print_startup_error`) and exit 2."""
    print_startup_error(error)
    raise SystemExit(EXIT_STARTUP_ERROR)
