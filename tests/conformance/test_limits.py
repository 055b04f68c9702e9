"""C4: the call timeout (408) and the body limit (413)."""

from __future__ import annotations

import time

from .kit import TIMEOUT_BODY


def test_a_call_past_the_timeout_gets_408_in_time(runtime, timing):
    """0.2 s after the deadline on an idle machine, scaled by the machine's calibration (tests/support/calibration.py).

    Mutation caught: funcwsgi's watchdog answering 0.4 s past the deadline (``call.deadline + 0.4 <= now``).
    """
    limit = runtime.settings.call_timeout
    started = time.monotonic()
    response = runtime.get(f"/sleep?seconds={limit + 5}")
    elapsed = time.monotonic() - started
    assert response.status_code == 408
    assert response.text == TIMEOUT_BODY
    assert limit - 0.1 <= elapsed < limit + timing.slack(0.2), f"{elapsed:.3f} s ({timing})"


def test_a_call_within_the_timeout_completes(runtime):
    assert runtime.get("/sleep?seconds=0.1").text == "slept"


def test_the_runtime_serves_while_a_call_times_out(runtime, timing):
    """Calls overlap: while one call runs into its timeout, four calls of 0.5 s each are all
    answered within 0.5 s and a (calibrated) slack, which one at a time they could not be.

    Mutation caught: funcwsgi's timeout layer running calls one at a time behind one lock.
    """
    from concurrent.futures import ThreadPoolExecutor

    limit = runtime.settings.call_timeout
    with ThreadPoolExecutor(5) as pool:
        slow = pool.submit(runtime.get, f"/sleep?seconds={limit + 5}")
        began = time.monotonic()
        short = [pool.submit(runtime.get, "/sleep?seconds=0.5") for _ in range(4)]
        assert runtime.get("/healthz").text == "OK"
        assert [call.result().text for call in short] == ["slept"] * 4
        took = time.monotonic() - began
        assert not slow.done(), "the slow call ended before the others: they did not run while it did"
        assert 0.5 <= took < 0.5 + timing.slack(0.3), f"four 0.5 s calls took {took:.2f} s together ({timing})"
        assert slow.result().status_code == 408


def test_a_body_at_the_limit_is_accepted(runtime):
    size = runtime.settings.max_body_size
    response = runtime.request("POST", "/size", data=b"x" * size)
    assert (response.status_code, response.text) == (200, str(size))


def test_a_body_over_the_limit_gets_413(runtime):
    response = runtime.request("POST", "/size", data=b"x" * (runtime.settings.max_body_size + 1))
    assert response.status_code == 413


def test_a_chunked_body_over_the_limit_gets_413(runtime):
    size = runtime.settings.max_body_size

    def chunks():
        sent = 0
        while sent <= size:
            yield b"y" * 4096
            sent += 4096

    response = runtime.request("POST", "/size", data=chunks())
    assert response.status_code == 413
