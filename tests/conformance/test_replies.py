"""C13: the short answers the runtime makes itself: the same status, text, type and length in every runtime."""

from __future__ import annotations

import socket

import pytest

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


def _exchange(runtime, request: bytes) -> bytes:
    """What the runtime sends back for raw ``request`` bytes, up to its closing the connection."""
    with socket.create_connection(("127.0.0.1", runtime.process.port), timeout=5) as client:
        client.sendall(request)
        answer = b""
        while chunk := client.recv(65536):
            answer += chunk
    return answer


@pytest.mark.parametrize("host", [b"a b", b"x/y", b"x@y", b"x:abc"])
def test_400_for_a_host_that_is_no_host(runtime, host):
    """RFC 9112 section 3.2: a server MUST answer 400 to a request whose Host has an invalid value."""
    answer = _exchange(runtime, b"GET /hello HTTP/1.1\r\nHost: " + host + b"\r\nConnection: close\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 400 "), answer[:200]
    assert answer.endswith(b"the request's Host field is not a host and port"), answer[-200:]


def test_close_wins_over_keep_alive_on_http_1_0(runtime):
    """RFC 9112 section 9.6: a request whose Connection holds close is the connection's last, keep-alive beside it or not."""
    answer = _exchange(runtime, b"GET /hello HTTP/1.0\r\nConnection: close, keep-alive\r\n\r\nGET /hello HTTP/1.0\r\n\r\n")
    assert answer.count(b"HTTP/1.") == 1, answer[:400]
