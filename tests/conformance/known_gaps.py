"""Checks a runtime is known to fail today, one line each: (runtime, check, reason).

Each is marked ``xfail(strict=True)`` for that runtime only: it still runs,
and the day it passes the strict mark fails the run, so the line must go.
A check is named as pytest names it without the runtime, e.g.
``test_hooks.py::test_alive_false_fails_liveness_and_healthz``.
"""

from __future__ import annotations

KNOWN_GAPS: tuple[tuple[str, str, str], ...] = ()
