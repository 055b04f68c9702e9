"""How a call is timed: on the server's own thread under a watchdog, or on a pool thread.

:mod:`funcwsgi.middleware.timeout` is the layer; this package holds the two
ways it runs a call and the exception both raise in a function that ran out
of time.
"""

from __future__ import annotations

import functools
import logging
import os
import weakref
from typing import Any, Protocol

from ..logs import call_fields
from ..replies import CALL_TIMEOUT

log = logging.getLogger("funcwsgi.timeout")


class CallTimeout(BaseException):
    """Raised inside a function whose call ran out of time.

    A ``BaseException``, like ``KeyboardInterrupt``, so that ``except
    Exception`` in the function does not swallow it; ``finally`` blocks and
    context managers still run.
    """


class Expired(Exception):
    """The runtime's own signal that a call's deadline passed; its message says how.

    ``answered`` when the watchdog has answered the client already (and logged it): the
    response the layer still owes the server goes to a socket shut for writing.
    """

    def __init__(self, why: str, *, answered: bool = False) -> None:
        super().__init__(why)
        self.why = why
        self.answered = answered


@functools.cache
def _set_async_exc() -> Any:
    # ctypes is imported at the first timeout, not by every server at start-up.
    import ctypes

    function = ctypes.pythonapi.PyThreadState_SetAsyncExc
    function.argtypes = (ctypes.c_ulong, ctypes.py_object)
    function.restype = ctypes.c_int
    return function


def interrupt(ident: int) -> None:
    """Raise :class:`CallTimeout` in thread ``ident`` at its next Python instruction."""
    _set_async_exc()(ident, CallTimeout)


def cancel_interrupt(ident: int) -> None:
    """Withdraw an interrupt that has not been raised yet (``NULL`` clears it)."""
    import ctypes

    _set_async_exc()(ident, ctypes.py_object())


#: The answer to a call that outlived ``SERVER_CALL_TIMEOUT``, on both timeout paths.
TIMED_OUT = CALL_TIMEOUT


def log_timeout(seconds: float, why: str, environ: dict[str, Any]) -> None:
    """The one warning a timed-out call leaves, naming its method and path."""
    log.warning(
        "Call timed out after %gs (%s): %s %s",
        seconds,
        why,
        environ.get("REQUEST_METHOD", "?"),
        environ.get("SCRIPT_NAME", "") + environ.get("PATH_INFO", ""),
        extra=call_fields(environ),  # written on the watchdog's thread too, outside the call's context
    )


class ForkAware(Protocol):
    def after_fork(self) -> None: ...


_renewed: weakref.WeakSet[Any] = weakref.WeakSet()


def renew_after_fork(instance: ForkAware) -> None:
    """Call ``instance.after_fork()`` in every forked child: it has none of its parent's threads."""
    _renewed.add(instance)


def _after_fork_in_child() -> None:
    for instance in list(_renewed):
        instance.after_fork()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
