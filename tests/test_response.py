from __future__ import annotations

import json

import pytest

from funcwsgi.response import FunctionResponse

from .conftest import CLIENT_KINDS, client_of
from .support.paths import function_folder
from .support.wsgi import StartResponse

TEXT = "text/plain; charset=utf-8"


@pytest.fixture(scope="module", params=CLIENT_KINDS)
def returns(request):
    """The return-value fixture, called plainly and through PEP 3333's validator."""
    from funcwsgi import make_app

    return client_of(make_app(environ={}, handler_folder=function_folder("returns")), request.param)


@pytest.mark.parametrize(
    ("kind", "status", "content_type", "body"),
    [
        pytest.param("none", 200, TEXT, b"", id="none"),
        pytest.param("str", 200, TEXT, b"<script>alert(1)</script>", id="str-is-text-not-html"),
        pytest.param("bytes", 200, "application/octet-stream", b"\x00raw", id="bytes"),
        pytest.param("bytearray", 200, "application/octet-stream", b"ba", id="bytearray"),
        pytest.param("dict", 200, "application/json", b'{"a": 1, "b": [1, 2]}', id="dict"),
        pytest.param("list", 200, "application/json", b'[1, "two"]', id="list"),
        pytest.param("tuple-status", 201, TEXT, b"made", id="tuple-status"),
        pytest.param("tuple-status-text", 418, TEXT, b"teapot", id="tuple-status-text"),
        pytest.param("tuple-headers", 200, TEXT, b"with headers", id="tuple-headers"),
        pytest.param("tuple-header-list", 200, "application/json", b'{"x": 1}', id="tuple-header-list"),
        pytest.param("tuple-all", 204, None, b"", id="tuple-all"),  # a 204 has no Content-Type
        pytest.param("tuple-content-type", 200, "text/html", b"<p>ok</p>", id="tuple-content-type-wins"),
        pytest.param("response", 203, "text/csv; charset=utf-8", b"from werkzeug", id="werkzeug-response"),
        pytest.param("generator", 200, TEXT, b"one,two,three", id="generator-streams"),
        pytest.param("tuple-response", 201, "text/csv; charset=utf-8", b"r", id="tuple-with-a-response"),
    ],
)
def test_return_coercion(returns, kind, status, content_type, body):
    response = returns.get(f"/{kind}")
    assert response.status_code == status
    assert response.headers.get("Content-Type") == content_type
    assert response.data == body


def test_tuple_headers_are_sent(returns):
    assert returns.get("/tuple-headers").headers["X-A"] == "1"
    assert returns.get("/tuple-header-list").headers["X-B"] == "2"
    assert returns.get("/tuple-all").headers["X-C"] == "3"
    assert returns.get("/tuple-response").headers["X-D"] == "4"


def test_content_length_is_set_for_whole_bodies(returns):
    assert returns.get("/str").headers["Content-Length"] == str(len(b"<script>alert(1)</script>"))
    assert "Content-Length" not in returns.get("/generator").headers


@pytest.mark.parametrize("kind", ["unsupported", "int", "bad-tuple", "bad-status"])
def test_unsupported_return_values_are_500_and_logged(returns, kind, caplog):
    response = returns.get(f"/{kind}")
    assert response.status_code == 500
    assert response.data == b"Internal Server Error"
    assert "Function failed on GET" in caplog.text


def test_unsupported_return_log_names_the_type(returns, caplog):
    returns.get("/unsupported")
    assert "returned a handler.Unsupported" in caplog.text


def test_head_has_headers_but_no_body(returns):
    response = returns.head("/str")
    assert response.status_code == 200
    assert response.data == b""
    assert response.headers["Content-Length"] == str(len(b"<script>alert(1)</script>"))


@pytest.fixture(scope="module")
def res_client():
    from werkzeug.test import Client

    from funcwsgi import make_app

    from .support.paths import function_folder

    return Client(make_app(environ={}, handler_folder=function_folder("req_res")))


def test_set_code_and_body(res_client):
    response = res_client.get("/code")
    assert (response.status_code, response.data) == (201, b"created")


def test_camel_case_spellings_chain(res_client):
    response = res_client.get("/camel")
    assert response.status_code == 202
    assert response.headers["X-Camel"] == "yes"


def test_headers_set_and_added(res_client):
    response = res_client.get("/headers")
    assert response.headers["X-One"] == "1"
    assert response.headers.getlist("X-Many") == ["a", "b"]


def test_set_json(res_client):
    response = res_client.post("/json", json={"n": 1})
    assert response.headers["Content-Type"] == "application/json"
    assert response.get_json() == {"ok": True, "echo": {"n": 1}}


def test_set_text_with_content_type(res_client):
    response = res_client.get("/text")
    assert response.headers["Content-Type"] == "text/html; charset=utf-8"
    assert response.data == b"<b>hi</b>"


def test_set_data(res_client):
    response = res_client.get("/data")
    assert response.headers["Content-Type"] == "image/x-test"
    assert response.data == b"\x00\x01"


def test_set_body_dict_is_json(res_client):
    assert res_client.get("/body-dict").get_json() == {"a": 1}


def test_return_value_wins_over_res_body_but_keeps_status_and_headers(res_client):
    response = res_client.get("/return-wins")
    assert response.status_code == 201
    assert response.get_json() == {"returned": True}
    assert response.headers["X-From-Res"] == "kept"


def test_header_injection_is_refused(res_client):
    response = res_client.get("/bad-header")
    assert response.status_code == 500
    assert "X-Injected" not in response.headers
    assert "Set-Cookie" not in response.headers


def test_bad_status_code_is_500(res_client):
    assert res_client.get("/bad-code").status_code == 500


def test_request_parts_reach_the_function(res_client):
    response = res_client.post(
        "/request?a=1&a=2",
        headers={"X-Test": "t"},
        data={"field": "v", "upload": (__import__("io").BytesIO(b"file body"), "f.txt")},
    )
    body = response.get_json()
    assert body["method"] == "POST"
    assert body["args"] == {"a": ["1", "2"]}
    assert body["header"] == "t"
    assert body["form"] == {"field": "v"}
    assert body["files"] == {"upload": "file body"}


def test_echo_body(res_client):
    response = res_client.post("/echo", data=b"raw bytes", content_type="application/x-thing")
    assert response.data == b"raw bytes"
    assert response.headers["Content-Type"] == "application/x-thing"


def test_function_response_unit():
    res = FunctionResponse()
    assert res.status_code == 200 and res.content_type is None and res.body is None
    res.content_type = "text/csv"
    assert res.content_type == "text/csv"
    with pytest.raises(ValueError, match="from 100 to 999"):
        res.set_code("200")  # type: ignore[arg-type]
    assert json.loads(res.set_json([1]).body) == [1]


def test_returning_res_sends_it():
    from werkzeug.test import Client

    from funcwsgi import make_app

    def main(req, res):
        return res.set_code(201).set_header("X-Made", "yes").set_body({"id": 7})

    response = Client(make_app(main, environ={})).post("/")
    assert response.status_code == 201
    assert response.headers["X-Made"] == "yes"
    assert response.get_json() == {"id": 7}


# Cases the mutation run (make mutation, docs/reliability.md) found untested: send() called
# directly, as a strict server calls an app.


def _sent(result, res=None, method="GET"):
    from funcwsgi.response import send

    start = StartResponse()
    # Decoded, as a server parses the method off the wire: not the interned literal.
    body = b"".join(send(result, res, {"REQUEST_METHOD": method.encode().decode()}, start))
    assert len(start.calls) == 1, f"start_response called {len(start.calls)} times"
    return start.status, start.headers, body


@pytest.mark.parametrize("code", [100, 999])
def test_set_code_takes_100_to_999(code):
    """Mutations caught: the bounds of ``100 <= code <= 999`` in ``set_code`` moved by one."""
    assert FunctionResponse().set_code(code).status_code == code


@pytest.mark.parametrize("code", [99, 1000])
def test_set_code_refuses_codes_outside_100_to_999(code):
    with pytest.raises(ValueError, match=f"status code must be an integer from 100 to 999, got {code}"):
        FunctionResponse().set_code(code)


@pytest.mark.parametrize("status", [100, 999, "100 Continue", "999"])
def test_a_tuples_status_from_100_to_999_is_taken(status):
    """Mutations caught: the bounds of ``_parse_status`` moved by one."""
    assert _sent(("x", status))[0].split(" ")[0] == str(status).split(" ")[0]


@pytest.mark.parametrize("result", [("x", 99), ("x", 1000), ("x", "99 Low"), ("only",), ("x", 200, {}, "extra")], ids=["99", "1000", "99-text", "one-item", "four-items"])
def test_tuples_that_cannot_be_a_response_are_refused(result):
    """Mutations caught: ``len(result) == 2`` or ``== 3`` made ``<=``/``>=``, and the status bounds."""
    from funcwsgi.response import UnsupportedResponse

    with pytest.raises(UnsupportedResponse):
        _sent(result)


def test_the_runtime_counts_a_whole_bodys_length_itself():
    """Mutations caught: the function's own Content-Length kept next to the runtime's for a whole body."""
    res = FunctionResponse()
    res.set_header("Content-Length", "999")
    status, headers, body = _sent(b"four", res)
    assert [value for name, value in headers if name == "Content-Length"] == ["4"] and body == b"four"


def test_a_streamed_body_keeps_the_length_the_function_declared():
    """Mutation caught: the function's Content-Length removed from a streamed body too."""
    res = FunctionResponse()
    res.set_header("Content-Length", "6")
    status, headers, body = _sent(iter([b"abc", "def"]), res)
    assert [value for name, value in headers if name == "Content-Length"] == ["6"] and body == b"abcdef"


@pytest.mark.parametrize("method", ["GET", "HEAD", "POST"])
def test_a_whole_body_is_sent_except_for_head(method):
    """Mutation caught: ``== "HEAD"`` made ``is "HEAD"`` (only the interned literal would match)."""
    status, headers, body = _sent("hello", method=method)
    assert ("Content-Length", "5") in headers
    assert body == (b"" if method == "HEAD" else b"hello")


def test_a_streamed_iterable_that_is_not_an_iterator_is_streamed_and_closed():
    """Mutations caught: ``isinstance(body, Iterator) or _is_stream(body)`` made ``and``; the stream's
    ``close()`` not called (``if close is not None`` inverted)."""

    class Chunks:
        closed = False

        def __iter__(self):
            return iter(["a", b"b"])

        def close(self):
            Chunks.closed = True

    assert _sent(Chunks())[2] == b"ab"
    assert Chunks.closed


@pytest.mark.parametrize("method", ["GET", "POST", "HEAD"])
def test_a_returned_cloudevent_is_sent_in_binary_mode(method):
    """Mutations caught in ``send_cloud_event``: the ce-* headers not set (a loop over nothing), the
    default status without ``res``, ``res``'s headers and status dropped, the body sent for HEAD or
    left out for POST (``== "HEAD"`` made ``>=``)."""
    from funcwsgi.compat.cloudevents_lib import make_event

    event = make_event({"type": "order.accepted", "source": "/orders", "datacontenttype": "application/json"}, {"accepted": True})
    status, headers, body = _sent(event, method=method)
    named = {name.lower(): value for name, value in headers}
    assert status == "200 OK" and named["ce-type"] == "order.accepted" and named["ce-source"] == "/orders"
    assert named["content-type"] == "application/json" and named["content-length"] == str(len(b'{"accepted": true}'))
    assert body == (b"" if method == "HEAD" else b'{"accepted": true}')
    res = FunctionResponse().set_code(202).set_header("X-Kept", "yes")
    status, headers, _ = _sent(event, res, method=method)
    named = {name.lower(): value for name, value in headers}
    assert status == "202 Accepted" and named["x-kept"] == "yes" and named["ce-type"] == "order.accepted"
