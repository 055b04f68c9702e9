from __future__ import annotations

import json

import pytest

from funcwsgi.response import FunctionResponse

from .conftest import CLIENT_KINDS, client_of, function_folder

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

    from .conftest import function_folder

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
