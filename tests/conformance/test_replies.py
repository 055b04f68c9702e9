"""C13: the short answers the runtime makes itself: the same status, text, type and length in every runtime."""

from __future__ import annotations

from .kit import INTERNAL_ERROR, TIMEOUT_BODY

TEXT = "text/plain;charset=utf-8"


def assert_reply(response, status: int, text: str | None = None) -> None:
    assert response.status_code == status, (response.status_code, response.text[:200])
    assert response.headers["Content-Type"].replace(" ", "").lower() == TEXT
    assert response.headers["Content-Length"] == str(len(response.content))
    if text is not None:
        assert response.text == text


def test_500(runtime):
    assert_reply(runtime.get("/raise"), 500, INTERNAL_ERROR)


def test_408(runtime):
    assert_reply(runtime.get(f"/sleep?seconds={runtime.settings.call_timeout + 0.5}"), 408, TIMEOUT_BODY)


def test_413(runtime):
    limit = runtime.settings.max_body_size
    response = runtime.request("POST", "/size", data=b"x" * (limit + 1))
    assert_reply(response, 413, f"Request Entity Too Large: the request body is larger than {limit} bytes")


def test_400_for_a_malformed_cloudevent(runtime):
    response = runtime.request("POST", "/cloudevent/echo", data=b"{not json", headers={"Content-Type": "application/cloudevents+json"})
    assert_reply(response, 400)
    assert response.text.startswith("Bad Request")


def test_400_for_a_body_that_is_not_json(runtime):
    response = runtime.request("POST", "/request/json", data=b"{not json", headers={"Content-Type": "application/json"})
    assert_reply(response, 400)
    assert response.text.startswith("Bad Request")


def test_probes(runtime):
    assert_reply(runtime.get("/healthz"), 200, "OK")
    head = runtime.request("HEAD", "/healthz")
    assert head.status_code == 200 and head.content == b"" and head.headers["Content-Length"] == "2"


def test_a_500_to_head_keeps_its_length_without_the_body(runtime):
    head = runtime.request("HEAD", "/raise")
    assert head.status_code == 500 and head.content == b""
    assert head.headers["Content-Length"] == str(len(INTERNAL_ERROR))
