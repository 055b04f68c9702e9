"""Request ids: the caller's X-Request-Id or a new one, echoed, also on a 500."""

from __future__ import annotations

import re


def test_the_callers_request_id_is_echoed(runtime):
    assert runtime.get("/hello", headers={"X-Request-Id": "kit-id-1"}).headers["X-Request-Id"] == "kit-id-1"


def test_a_call_without_one_gets_a_new_random_id(runtime):
    first = runtime.get("/hello").headers["X-Request-Id"]
    second = runtime.get("/hello").headers["X-Request-Id"]
    assert re.fullmatch(r"[0-9a-f]{32}", first) and re.fullmatch(r"[0-9a-f]{32}", second)
    assert first != second


def test_a_failed_call_echoes_its_id(runtime):
    response = runtime.get("/raise", headers={"X-Request-Id": "kit-failed-1"})
    assert response.status_code == 500 and response.headers["X-Request-Id"] == "kit-failed-1"


def test_an_unusable_id_is_replaced(runtime):
    response = runtime.get("/hello", headers={"X-Request-Id": "x" * 129})
    assert re.fullmatch(r"[0-9a-f]{32}", response.headers["X-Request-Id"])


def test_the_failure_record_carries_the_id(runtime):
    runtime.get("/raise", headers={"X-Request-Id": "kit-failed-2"})
    runtime.wait_for_log("kit-failed-2")
    failures = [r for r in runtime.log_records() if r.get("request_id") == "kit-failed-2"]
    assert failures and any(r["level"] == "ERROR" for r in failures), runtime.read_log()[-2000:]
