"""Checks a runtime is known to fail today, one line each: (runtime, check, reason).

Each is marked ``xfail(strict=True)`` for that runtime only: it still runs,
and the day it passes the strict mark fails the run, so the line must go.
A check is named as pytest names it without the runtime, e.g.
``test_hooks.py::test_alive_false_fails_liveness_and_healthz``.
"""

from __future__ import annotations

_CLIENT_LEAVES = "test_cancellation.py::test_a_client_that_leaves_cancels_its_call_within_half_a_second"
#: Servers that do not tell the core whether a call's client is still there (docs/sdk.md#cancellation).
_NO_CONNECTION = "the server gives the call no way to see its client leave: cancelled at the timeout only"

KNOWN_GAPS: tuple[tuple[str, str, str], ...] = (
    ("funcwsgi-waitress", _CLIENT_LEAVES, _NO_CONNECTION),
    ("funcwsgi-werkzeug", _CLIENT_LEAVES, _NO_CONNECTION),
    ("funcwsgi-granian", _CLIENT_LEAVES, _NO_CONNECTION),
)
