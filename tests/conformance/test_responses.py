"""C2: what the function's answers become on the wire."""

from __future__ import annotations


def test_text_is_plain_text(runtime):
    response = runtime.get("/hello")
    assert (response.status_code, response.text) == (200, "hello")
    assert response.headers["Content-Type"].split(";")[0] == "text/plain"
    assert response.headers["Content-Length"] == "5"


def test_objects_are_json(runtime):
    response = runtime.get("/json")
    assert response.headers["Content-Type"].split(";")[0] == "application/json"
    assert response.json() == {"a": 1, "list": [1, "two"], "text": "ü"}


def test_status_codes_are_kept(runtime):
    for code in (201, 202, 404, 418):
        response = runtime.get(f"/status/{code}")
        assert (response.status_code, response.text) == (code, f"status {code}")


def test_204_has_no_body(runtime):
    response = runtime.get("/status/204")
    assert response.status_code == 204 and response.content == b""


def test_headers_are_sent(runtime):
    assert runtime.get("/headers").headers["X-Conformance"] == "yes"


def test_body_round_trips_byte_for_byte(runtime):
    body = bytes(range(256)) * 4
    response = runtime.request("POST", "/echo", data=body, headers={"Content-Type": "application/x-test"})
    assert response.content == body
    assert response.headers["Content-Type"] == "application/x-test"
