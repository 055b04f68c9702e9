"""C3: a failing function is a plain 500, and the runtime keeps serving."""

from __future__ import annotations

from .kit import INTERNAL_ERROR, SECRET


def test_failure_is_a_plain_500(runtime):
    response = runtime.get("/raise")
    assert response.status_code == 500
    assert response.text == INTERNAL_ERROR
    assert response.headers["Content-Type"].split(";")[0] == "text/plain"


def test_nothing_of_the_exception_reaches_the_client(runtime):
    response = runtime.get("/raise")
    assert SECRET not in response.text
    assert all(SECRET not in value for value in response.headers.values())


def test_the_runtime_keeps_serving_after_failures(runtime):
    for _ in range(3):
        assert runtime.get("/raise").status_code == 500
    assert runtime.get("/hello").text == "hello"
    assert runtime.get("/healthz").status_code == 200


def test_the_traceback_goes_to_the_log(runtime):
    if runtime.read_log is None:
        import pytest

        pytest.skip("no --runtime-log given")
    runtime.get("/raise")
    assert SECRET in _wait_for(runtime, SECRET)


def _wait_for(runtime, text, timeout=5.0):
    import time

    deadline = time.monotonic() + timeout
    log = ""
    while time.monotonic() < deadline:
        log = runtime.read_log()
        if text in log:
            return log
        time.sleep(0.05)
    return log
