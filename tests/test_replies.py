from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from funcwsgi.replies import BUSY, BUSY_TEXT, REQUEST_TIMEOUT, Reply, bodiless, status_line

from .support.wsgi import StartResponse


def call(reply: Reply, method: str = "GET", **kwargs):
    start = StartResponse()
    if kwargs:
        body = reply.answer({"REQUEST_METHOD": method}, start, **kwargs)
    else:
        body = reply({"REQUEST_METHOD": method}, start)
    return start.status, start.headers, b"".join(body), start.exc_info


def test_status_line_for_unknown_codes():
    assert status_line(200) == "200 OK"
    assert status_line(299) == "299 Unknown"


@pytest.mark.parametrize(
    ("reply", "status", "headers", "body"),
    [
        pytest.param(
            Reply(413, "too big"),
            "413 Request Entity Too Large",
            [("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", "7")],
            b"too big",
            id="text",
        ),
        pytest.param(Reply(200, "héllo"), "200 OK", [("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", "6")], "héllo".encode(), id="utf-8-counted-in-bytes"),
        pytest.param(Reply(200), "200 OK", [("Content-Length", "0")], b"", id="empty"),
        pytest.param(Reply(204), "204 No Content", [], b"", id="204-no-length"),
        pytest.param(
            Reply(200, b"# metrics", content_type="text/plain; version=0.0.4", headers=[("Cache-Control", "no-store")]),
            "200 OK",
            [("Content-Type", "text/plain; version=0.0.4"), ("Content-Length", "9"), ("Cache-Control", "no-store")],
            b"# metrics",
            id="own-type-and-headers",
        ),
    ],
)
def test_reply_is_a_wsgi_app(reply, status, headers, body):
    assert call(reply)[:3] == (status, headers, body)


def test_head_gets_the_headers_without_the_body():
    status, headers, body, _ = call(Reply(500, "Internal Server Error"), "HEAD")
    assert (status, body) == ("500 Internal Server Error", b"")
    assert ("Content-Length", "21") in headers  # the length the GET would have had


def test_answer_adds_headers_for_one_call_only():
    reply = Reply(500, "Internal Server Error")
    _, headers, _, _ = call(reply, headers=[("X-Request-Id", "r1")])
    assert headers[-1] == ("X-Request-Id", "r1")
    assert ("X-Request-Id", "r1") not in call(reply)[1]


def test_answer_passes_exc_info_to_replace_a_started_response():
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        failure = sys.exc_info()
    assert call(Reply(408, "late"), exc_info=failure)[3] is failure


def test_the_headers_handed_out_are_a_fresh_list():
    reply = Reply(400, "bad")
    _, first, _, _ = call(reply)
    first.append(("X-Added", "by a layer"))
    assert ("X-Added", "by a layer") not in call(reply)[1]


def test_http_head_for_writing_to_a_socket():
    head = Reply(408, "late").http_head(("Connection", "close"))
    assert head == (
        b"HTTP/1.1 408 Request Timeout\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 4\r\nConnection: close\r\n\r\n"
    )


def test_repr_shows_status_and_text():
    assert repr(Reply(404, "Not Found")) == "Reply('404 Not Found', b'Not Found')"


# Cases the mutation run (make mutation, docs/reliability.md) found untested.


@pytest.mark.parametrize("code", [304, 204, 100, 103, 199])
def test_bodiless_statuses_send_no_length(code):
    """Mutations caught: ``BODILESS`` holding 303 or 305 instead of 304."""
    assert call(Reply(code))[1] == []


@pytest.mark.parametrize("code", [200, 303, 305])
def test_empty_replies_of_other_statuses_send_a_zero_length(code):
    assert call(Reply(code))[1] == [("Content-Length", "0")]


@pytest.mark.parametrize("method", ["GET", "POST", "DELETE", "HEAD"])
def test_the_body_goes_to_every_method_but_head(method):
    """Mutations caught: ``!= "HEAD"`` made ``<`` or ``is not`` (a method parsed off the wire is not the interned literal)."""
    _, headers, body, _ = call(Reply(413, "too big"), method.encode().decode())
    assert ("Content-Length", "7") in headers
    assert body == (b"" if method == "HEAD" else b"too big")


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        ("204 No Content", True),
        ("304 Not Modified", True),
        ("100 Continue", True),
        ("199 Whatever", True),
        ("200 OK", False),
        ("205 Reset Content", False),
        ("ABC Broken", False),
        ("", False),
    ],
)
def test_bodiless_reads_the_status_line(status, expected):
    """RFC 9112 section 6.3: every 1xx, 204 and 304 ends at its head; a status that is not a number is not bodiless."""
    assert bodiless(status) is expected


# -- one source for the runtime's refusals -----------------------------------------------------

REPO = Path(__file__).resolve().parent.parent
#: The refusals issue 45 puts in one place (funcwsgi/replies.py).
REFUSAL_CODES = frozenset({400, 408, 413, 431, 503})
#: Where another platform's own words are kept (its contract), and where the refusals are made.
MAY_MAKE_THEM = ("funcwsgi/replies.py", "funcwsgi/compat/")


def refusals_made_in(path: Path) -> list[str]:
    """Each ``Reply(code, ...)``/``Refusal(code, ...)`` with a refusal's literal code: a refusal built in place."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if (
            isinstance(node, ast.Call)
            and getattr(node.func, "id", getattr(node.func, "attr", None)) in ("Reply", "Refusal")
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and node.args[0].value in REFUSAL_CODES
        ):
            found.append(f"line {node.lineno}: {node.args[0].value}")
    return found


def test_every_refusal_the_runtime_writes_comes_from_replies():
    made = [
        f"{path.relative_to(REPO)} {found}"
        for path in sorted((REPO / "funcwsgi").rglob("*.py"))
        if "data" not in path.parts and not str(path.relative_to(REPO)).startswith(MAY_MAKE_THEM)
        for found in refusals_made_in(path)
    ]
    assert made == []


def test_a_refusal_built_in_place_is_caught(tmp_path):
    layer = tmp_path / "layer.py"
    layer.write_text('OK = Reply(200, "fine")\nBUSY = replies.Reply(503, "busy")\nSLOW = Refusal(408, "late")\n', encoding="utf-8")
    assert refusals_made_in(layer) == ["line 2: 503", "line 3: 408"]


def test_a_server_writes_the_same_refusal_as_a_layer_and_the_loop():
    """The raw bytes a server sends itself are the reply's, with the connection closed."""
    wire = BUSY.closing_wire()
    head, _, body = wire.partition(b"\r\n\r\n")
    assert head.split(b"\r\n")[0] == b"HTTP/1.1 503 Service Unavailable"
    assert b"Retry-After: 1" in head and head.endswith(b"Connection: close")
    assert body == BUSY.body == BUSY_TEXT.encode()
    on_the_loop = BUSY.with_headers(("Connection", "close"))
    assert (on_the_loop.status, on_the_loop.body) == (BUSY.status, BUSY.body)
    assert on_the_loop.headers == (*BUSY.headers, ("Connection", "close"))
    assert REQUEST_TIMEOUT.closing_wire().startswith(b"HTTP/1.1 408 Request Timeout\r\n")
