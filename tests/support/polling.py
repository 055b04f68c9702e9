"""Waiting for a condition by polling it, never by sleeping a guessed time.

Standard library only (the conformance kit uses it).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


def wait_for(
    predicate: Callable[[], T],
    timeout: float = 15.0,
    what: str = "condition",
    show: Callable[[], str] | None = None,
    ignore: tuple[type[BaseException], ...] = (),
) -> T:
    """The predicate's first true value within ``timeout`` seconds, else an AssertionError naming ``what``.

    ``show`` adds what to look at (a log) to the failure; exceptions of the
    ``ignore`` types count as not yet (a server still starting).
    """
    deadline = time.monotonic() + timeout
    while True:
        found: Any = None
        try:
            found = predicate()
        except ignore:
            pass
        if found:
            return found  # type: ignore[no-any-return]
        if time.monotonic() >= deadline:
            break
        time.sleep(0.02)
    detail = f"\n{show()[-3000:]}" if show else ""
    raise AssertionError(f"{what}: not seen within {timeout:g} s{detail}")
