"""C1: reserved routes, and every other path and method reaching the function."""

from __future__ import annotations

import pytest


def test_healthz_answers_ok(runtime):
    response = runtime.get("/healthz")
    assert (response.status_code, response.text) == (200, "OK")


def test_healthz_head_has_no_body(runtime):
    response = runtime.request("HEAD", "/healthz")
    assert response.status_code == 200 and response.content == b""


def test_favicon_is_204(runtime):
    assert runtime.get("/favicon.ico").status_code == 204


def test_post_to_healthz_reaches_the_function(runtime):
    assert runtime.request("POST", "/healthz").text == "fixture POST /healthz"


@pytest.mark.parametrize("method", ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"])
def test_every_method_reaches_the_function_with_its_path(runtime, method):
    response = runtime.request(method, "/any/path")
    assert (response.status_code, response.text) == (200, f"fixture {method} /any/path")


def test_head_gets_headers_without_body(runtime):
    response = runtime.request("HEAD", "/hello")
    assert response.status_code == 200 and response.content == b""


def test_request_line_reaches_the_function(runtime):
    assert runtime.get("/request?a=1&a=2&b=x").json() == {"method": "GET", "path": "/request", "query": {"a": ["1", "2"], "b": ["x"]}}
