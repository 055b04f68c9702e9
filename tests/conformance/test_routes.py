"""C1: reserved routes, and every other path and method reaching the function with its request."""

from __future__ import annotations

import pytest


def test_healthz_answers_ok(runtime):
    response = runtime.get("/healthz")
    assert (response.status_code, response.text) == (200, "OK")


@pytest.mark.parametrize("path", ["/healthz", "/health/readiness", "/health/liveness"])
def test_probes_answer_ok_and_head_has_no_body(runtime, path):
    assert (runtime.get(path).status_code, runtime.get(path).text) == (200, "OK")
    response = runtime.request("HEAD", path)
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
    assert response.headers["Content-Length"] == "5"


def test_request_line_reaches_the_function(runtime):
    assert runtime.get("/request?a=1&a=2&b=x").json() == {"method": "GET", "path": "/request", "query": {"a": ["1", "2"], "b": ["x"]}}


def test_headers_reach_the_function_by_any_case(runtime):
    assert runtime.get("/request/headers", headers={"X-CONFORMANCE": "sent"}).json() == {"x-conformance": "sent"}


def test_a_text_body_reaches_the_function(runtime):
    response = runtime.request("POST", "/request/text", data="grüße".encode(), headers={"Content-Type": "text/plain; charset=utf-8"})
    assert response.text == "grüße"


def test_a_json_body_is_parsed(runtime):
    response = runtime.request("POST", "/request/json", json={"order": [1, 2], "ok": True})
    assert response.json() == {"json": {"order": [1, 2], "ok": True}}


def test_a_body_that_is_not_json_is_a_400_when_read_as_json(runtime):
    response = runtime.request("POST", "/request/json", data=b"{not json", headers={"Content-Type": "application/json"})
    assert response.status_code == 400


def test_a_form_body_is_parsed(runtime):
    response = runtime.request("POST", "/request/form", data={"name": "kit", "n": "2"})
    assert response.json() == {"form": {"name": "kit", "n": "2"}}


def test_the_sdk_reports_the_function_and_the_settings(runtime):
    answer = runtime.get("/sdk").json()
    assert answer == {
        "function": runtime.settings.func_name,
        "namespace": runtime.settings.namespace,
        "runtime": runtime.launcher.runtime_name,
        "timeout": runtime.settings.call_timeout,
        "body_limit": runtime.settings.max_body_size / 2**20,  # in megabytes, as Kyma's FUNC_BODY_MB_LIMIT
        "labels": {},
        "request_path": "/sdk",
    }
