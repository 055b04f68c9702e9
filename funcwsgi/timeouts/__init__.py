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
from time import monotonic
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
    response the layer still owes the server goes to a socket shut for writing. ``late``
    when the function answered, but after its deadline: the status it may have set is
    replaced by the 408.
    """

    def __init__(self, why: str, *, answered: bool = False, late: bool = False) -> None:
        super().__init__(why)
        self.why = why
        self.answered = answered
        self.late = late


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


#: The two answers a timed call can end with: the function's own, or the 408.
KEPT = "kept"
EXPIRED = "expired"


class Deadline(list[str]):
    """When a call must have answered, and which answer its client gets: decided once, by whoever comes first.

    The function's side asks :meth:`keep` when its answer is taken (it returned, or
    began to write); the timeout's side (the watchdog, the loop's sweep, the
    thread waiting for a pooled call, ``sdk.cancelled()`` asking the clock) asks
    :meth:`expire` once the deadline has passed. The first of the two decides, for
    good: an answer taken before the deadline goes out, anything later is dropped
    for the 408, so the wire, the access log, the metrics and the span all see the
    one answer decided here. A server adapter never decides; it only serves the
    call the timeout layer times (docs/servers.md#one-answer-decided-once).

    The decision is a compare-and-set without a lock: each side appends its
    choice to the deadline, a list of the choices in the order they were made,
    and the first choice in it is the decision (``list.append`` is atomic, with
    the GIL and without it). A lock cost every call about 400 instructions more;
    a list of its own beside the deadline, and an ``__init__`` run in Python,
    about 800 (``python -m bench.edge_calls --count``). Made by :func:`deadline_in`:
    ``Deadline()``, then its :attr:`at`.
    """

    __slots__ = ("at",)
    #: The ``time.monotonic()`` past which the call has run out of time.
    at: float

    @property
    def outcome(self) -> str | None:
        """:data:`KEPT` or :data:`EXPIRED` once decided; None while the call runs."""
        return self[0] if self else None

    def keep(self) -> bool:
        """The function's answer is taken now: True when it goes out (taken before the deadline, or decided so before)."""
        if not self:
            self.append(KEPT if monotonic() < self.at else EXPIRED)
        return self[0] is KEPT

    def expire(self) -> bool:
        """The deadline has passed: True when the 408 goes out (decided now, or before); False when the answer was kept."""
        if not self:
            self.append(EXPIRED)
        return self[0] is EXPIRED

    def expired_by_now(self) -> bool:
        """Whether the 408 goes out, deciding so if the clock says the deadline has passed (``sdk.cancelled()``'s question)."""
        if not self and monotonic() < self.at:
            return False
        return self.expire()

    def __repr__(self) -> str:
        return f"<Deadline at {self.at:.3f}: {self.outcome or 'open'}>"


def deadline_in(seconds: float) -> Deadline:
    """A call's :class:`Deadline`, ``seconds`` from now."""
    deadline = Deadline()
    deadline.at = monotonic() + seconds
    return deadline


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
