"""The soak, bounded: `make test` runs it for SOAK_SECONDS (8 s by default; CI sets 60), `make soak` for 10 minutes.

The verdict comes from trends (tests/reliability/soak.py): each figure's
slope against the calls answered, with a tolerance per call and a noise
allowance, the same for every length. The in-process cases below feed the
verdict made-up samples of the shapes seen on real runs.
"""

from __future__ import annotations

import os
import random

import pytest

from .soak import Tally, print_report, report, run

SETTINGS = {"seconds": 60, "connections": 32, "adapter": "gunicorn", "workers": 2, "threads": 16, "sample_seconds": 0.6}


@pytest.mark.slow("a soak: mixed calls on 32 connections for SOAK_SECONDS, by design")
def test_soak_mixed_calls_on_32_connections():
    """The real soak.

    Mutation it catches: the runtime keeping 4.7 kB per call (a
    ``bytearray(4700)`` appended to a module-level list in
    ``RequestIdMiddleware.__call__``) fails an 8 s run with about
    +5 kB/call and +9.8 MB fitted; the fixed 5 MB limit this soak had
    over its 4 s window let it pass.
    """
    seconds = float(os.environ.get("SOAK_SECONDS", "8"))
    result = run(seconds, connections=32, adapter="gunicorn", workers=2, threads=16)
    print_report(result)
    assert result["passed"], result["problems"]
    assert len(result["workers"]) == 2  # both workers were measured, to the end
    assert set(result["trends"]) == {"memory", "threads", "descriptors"}  # the verdict looked at every figure


def samples(seconds: float, calls_per_second: float, figures, every: float = 0.5):
    """Made-up samples of two workers: ``figures(worker, calls)`` gives (rss_kb, threads, fds)."""
    made = []
    t = 0.0
    while t <= seconds:
        calls = int(t * calls_per_second)
        made.append((t, calls, {pid: dict(zip(("rss_kb", "threads", "fds"), figures(pid, calls), strict=True)) for pid in (101, 102)}))
        t += every
    return made


def verdict(seconds: float, figures) -> dict:
    tally = Tally(per_connection={offset: [int(seconds * 500 / 32), 0.2] for offset in range(32)})
    tally.statuses[("normal", 200)] = int(seconds * 500)
    warm_up = max(4.0, min(60.0, seconds * 0.2))
    return report(tally, samples(seconds, 500, figures), warm_up, seconds, {**SETTINGS, "seconds": seconds}, alive=True)


LENGTHS = pytest.mark.parametrize("seconds", [8, 60, 600], ids=["default", "ci", "ten-minutes"])


@LENGTHS
def test_a_leak_of_4_7_kb_per_call_fails_at_every_length(seconds):
    # Each worker serves half the calls and keeps 4.7 kB of each.
    result = verdict(seconds, lambda pid, calls: (30000 + calls // 2 * 47 // 10, 30, 30))
    assert not result["passed"]
    assert [problem.split(" +")[0] for problem in result["problems"]] == ["the workers' memory"]
    assert result["trends"]["memory"]["per_call"] == pytest.approx(4.7 * 1024, rel=0.05)


@LENGTHS
def test_a_thread_or_descriptor_leak_fails_at_every_length(seconds):
    # One thread and one descriptor kept per 150 calls a worker serves (an 8 s run measures ~2000 calls).
    result = verdict(seconds, lambda pid, calls: (30000, 20 + calls // 300, 30 + calls // 300))
    assert not result["passed"]
    assert {"the workers' threads", "the workers' descriptors"} <= {problem.split(" +")[0] for problem in result["problems"]}


@LENGTHS
def test_descriptors_moving_within_a_band_pass_at_every_length(seconds):
    # What failed 2 of 5 runs of the old check: [31, 31] in the first half, [31, 39] in the
    # second, as the callers' connections are re-made and move between the workers.
    rng = random.Random(seconds)
    result = verdict(seconds, lambda pid, calls: (30000 + rng.randrange(0, 700), 30 + rng.randrange(0, 2), 31 + rng.randrange(0, 9)))
    assert result["passed"], result["problems"]


def test_a_worker_that_ends_fails():
    made = samples(8, 500, lambda pid, calls: (30000, 30, 30))
    del made[-1][2][102]
    result = report(Tally(statuses={("normal", 200): 4000}, per_connection={0: [4000, 0.1]}), made, 4.0, 8.0, SETTINGS, alive=True)
    assert result["problems"] == ["worker 102 ended during the soak"]


@LENGTHS
def test_threads_filling_the_pool_late_then_flat_pass_at_every_length(seconds):
    # A busy machine: one worker's server threads start over the first half of the measured
    # calls (from 4 to 18 threads; a run that served 27 calls a second saw 4 to 14), then stay.
    total = seconds * 500
    first = max(4.0, min(60.0, seconds * 0.2)) * 500
    middle = first + (total - first) / 2

    def figures(pid, calls):
        filled = min(1.0, max(0.0, (calls - first) / (middle - first)))
        return 30000, (4 + round(14 * filled)) if pid == 101 else 18, 30

    result = verdict(seconds, figures)
    assert result["trends"]["threads"]["fitted_growth"] > 10  # more than the noise: the later half decides
    assert result["passed"], result["problems"]


def test_a_connection_left_waiting_fails():
    made = samples(60, 500, lambda pid, calls: (30000, 30, 30))
    tally = Tally(statuses={("normal", 200): 30000}, per_connection={0: [30000, 0.1], 1: [0, 60.0], 2: [3, 25.0]})
    result = report(tally, made, 12.0, 60.0, SETTINGS, alive=True)
    assert result["problems"] == ["1 connections got no answer", "a connection waited 60.0 s for an answer (at most 20 s)"]


def test_a_few_503s_under_overload_pass_and_many_fail():
    # Admission refuses a call that would wait past its target: on a loaded machine a few may be.
    made = samples(60, 500, lambda pid, calls: (30000, 30, 30))
    tally = Tally(statuses={("normal", 200): 30000}, per_connection={0: [30000, 0.1]})
    for refused, passed in ((1, True), (300, True), (301, False)):
        tally.refused = refused
        result = report(tally, made, 12.0, 60.0, SETTINGS, alive=True)
        assert result["passed"] is passed, (refused, result["problems"])
    assert result["problems"] == ["301 calls refused with 503, more than 1% of 30000"]
