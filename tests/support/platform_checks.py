"""The conformance fixture's core paths, checked alike for every platform's function, Python or Node.

Imported by tests/compat/test_platform_conformance.py and
tests/nodejs26/test_platform_conformance.py, which collect these checks (``__all__``)
as their own: each module gives the ``url`` fixture of its platforms' servers.
"""

from __future__ import annotations

import pytest
import requests

from .polling import wait_for

__all__ = ["test_hello", "test_json", "test_status", "test_headers", "test_echo_bytes", "test_request", "test_body_limit", "test_call_timeout", "test_metrics_count_the_calls_and_failures"]


def test_hello(url):
    response = requests.get(url + "/hello")
    assert (response.status_code, response.text) == (200, "hello")


def test_json(url):
    response = requests.get(url + "/json")
    assert response.headers["Content-Type"].startswith("application/json")
    assert response.json() == {"a": 1, "list": [1, "two"], "text": "ü"}


@pytest.mark.parametrize("code", [201, 404, 503])
def test_status(url, code):
    response = requests.get(url + f"/status/{code}")
    assert (response.status_code, response.text) == (code, f"status {code}")


def test_headers(url):
    assert requests.get(url + "/headers").headers["X-Conformance"] == "yes"


def test_echo_bytes(url):
    data = bytes(range(256))
    response = requests.post(url + "/echo", data=data, headers={"Content-Type": "application/x-test"})
    assert (response.content, response.headers["Content-Type"]) == (data, "application/x-test")


def test_request(url):
    assert requests.get(url + "/request?a=1&a=2&b=").json() == {"method": "GET", "path": "/request", "query": {"a": ["1", "2"], "b": [""]}}


def test_body_limit(url):
    assert requests.post(url + "/size", data=b"x" * 1000).text == "1000"
    assert requests.post(url + "/size", data=b"x" * 1001).status_code == 413


def test_call_timeout(url):
    assert requests.get(url + "/sleep?seconds=3", timeout=10).status_code == 408


def _metric(url: str, name: str) -> float:
    for line in requests.get(url + "/metrics").text.splitlines():
        if line.startswith(name + "{") and 'method="PATCH"' in line:
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def test_metrics_count_the_calls_and_failures(url):
    calls, failures = _metric(url, "function_calls_total"), _metric(url, "function_failures_total")
    requests.patch(url + "/hello")
    requests.patch(url + "/raise")
    # A streamed answer's call is counted when the server closes its body, which may come just after the client read it.
    wait_for(
        lambda: _metric(url, "function_calls_total") >= calls + 2 and _metric(url, "function_failures_total") >= failures + 1,
        5,
        "both calls counted",
    )
    assert _metric(url, "function_calls_total") == calls + 2
    assert _metric(url, "function_failures_total") == failures + 1
