"""The conformance fixture's core paths, checked alike for every platform's function, Python or Node.

Imported by tests/compat/test_platform_conformance.py and
tests/nodejs26/test_platform_conformance.py, which collect these checks as
their own: each module gives the ``url`` fixture of its platforms' servers.
"""

from __future__ import annotations

import pytest
import requests


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
