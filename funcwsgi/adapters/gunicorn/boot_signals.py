"""Shutdown signals that reach a worker while it boots: held, then handed to the worker's own handlers.

gunicorn's master handles a signal by queueing it for its own loop. A forked
worker keeps that handler until its ``init_signals()``, which runs after the
``post_fork`` hook, where the function's ``start()`` runs. The master sends
SIGTERM to every worker when it stops; one still booting put it in a queue that
nothing in the worker reads. The master then waited ``graceful_timeout``
(25 s by default) before it killed that worker, without its ``stop()``.

So the master blocks the shutdown signals from just before the fork
(:func:`hold`, the ``pre_fork`` hook) to just after it (:func:`release`, in
the parent). The new worker starts with them blocked. First thing in
``post_fork`` it takes them with a handler that only notes them
(:func:`take_early`). Once gunicorn has installed the worker's own handlers,
``post_worker_init`` raises each noted signal again (:func:`hand_over`).
"""

from __future__ import annotations

import os
import signal
from types import FrameType

SHUTDOWN_SIGNALS = frozenset({signal.SIGTERM, signal.SIGINT, signal.SIGQUIT})

_noted: list[int] = []
_release_registered = False


def hold() -> None:
    """In the master, right before it forks a worker: shutdown signals wait until the fork is done."""
    global _release_registered
    if not _release_registered:
        os.register_at_fork(after_in_parent=release)
        _release_registered = True
    signal.pthread_sigmask(signal.SIG_BLOCK, SHUTDOWN_SIGNALS)


def release() -> None:
    """In the master, right after a fork: the signals held meanwhile reach its own handlers."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, SHUTDOWN_SIGNALS)


def take_early() -> None:
    """In a new worker, before anything else it runs: note shutdown signals until gunicorn handles them."""
    for signum in SHUTDOWN_SIGNALS:
        signal.signal(signum, _note)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, SHUTDOWN_SIGNALS)


def _note(signum: int, frame: FrameType | None) -> None:
    _noted.append(signum)


def hand_over() -> None:
    """In the worker, its own handlers installed: raise the signals noted while it booted."""
    noted = list(_noted)
    _noted.clear()
    for signum in noted:
        signal.raise_signal(signum)
