"""The soak, bounded: `make test` runs it for SOAK_SECONDS (8 s by default; CI sets 60), `make soak` for 10 minutes."""

from __future__ import annotations

import os

from .soak import print_report, run


def test_soak_mixed_calls_on_32_connections():
    seconds = float(os.environ.get("SOAK_SECONDS", "8"))
    result = run(seconds, connections=32, adapter="gunicorn", workers=2, threads=16)
    print_report(result)
    assert result["passed"], result["problems"]
    assert result["calls"] > 32 * seconds  # every connection was served throughout
