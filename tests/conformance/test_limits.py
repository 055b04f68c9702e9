"""C4: the call timeout (408) and the body limit (413)."""

from __future__ import annotations

import time

from .kit import TIMEOUT_BODY


def test_a_call_past_the_timeout_gets_408_in_time(runtime):
    limit = runtime.settings.call_timeout
    started = time.monotonic()
    response = runtime.get(f"/sleep?seconds={limit + 5}")
    elapsed = time.monotonic() - started
    assert response.status_code == 408
    assert response.text == TIMEOUT_BODY
    assert limit - 0.1 <= elapsed < limit + 1.0, elapsed


def test_a_call_within_the_timeout_completes(runtime):
    assert runtime.get("/sleep?seconds=0.1").text == "slept"


def test_the_runtime_serves_while_a_call_times_out(runtime):
    import threading

    slow = threading.Thread(target=runtime.get, args=(f"/sleep?seconds={runtime.settings.call_timeout + 5}",))
    slow.start()
    try:
        assert runtime.get("/healthz").text == "OK"
        assert runtime.get("/hello").text == "hello"
    finally:
        slow.join()


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
