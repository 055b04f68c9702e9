from __future__ import annotations

import pytest
from werkzeug.exceptions import BadRequest
from werkzeug.test import EnvironBuilder

from funcwsgi.compat.bottle import Body, BottleRequest
from funcwsgi.request import FunctionRequest


def bottle_request(**kwargs) -> BottleRequest:
    return BottleRequest(FunctionRequest(EnvironBuilder(**kwargs).get_environ()))


def test_body_is_bytes_and_a_file():
    body = Body(b"line one\nline two\n")
    assert body == b"line one\nline two\n" and body.decode().startswith("line")
    assert body.read(4) == b"line"
    assert body.tell() == 4
    assert body.readline() == b" one\n"
    assert body.readlines() == [b"line two\n"]
    assert body.read() == b""
    assert body.seek(0) == 0 and body.read() == body.getvalue()
    assert body.seek(-4, 2) == len(body) - 4


def test_each_access_to_body_starts_at_the_beginning():
    request = bottle_request(method="POST", data=b"abc")
    assert request.body.read(1) == b"a"
    assert request.body.read() == b"abc"


@pytest.mark.parametrize(
    ("content_type", "data", "expected"),
    [
        pytest.param("application/json", b'{"a": 1}', {"a": 1}, id="json"),
        pytest.param("application/json; charset=utf-8", b"[1]", [1], id="json-with-charset"),
        pytest.param("application/json-rpc", b'{"id": 1}', {"id": 1}, id="json-rpc"),
        pytest.param("application/json", b"", None, id="empty"),
        pytest.param("text/plain", b'{"a": 1}', None, id="not-json-type"),
    ],
)
def test_json_follows_bottles_rules(content_type, data, expected):
    assert bottle_request(method="POST", data=data, content_type=content_type).json == expected


def test_invalid_json_is_a_400():
    request = bottle_request(method="POST", data=b"{nope", content_type="application/json")
    with pytest.raises(BadRequest):
        request.json  # noqa: B018


def test_query_forms_params():
    request = bottle_request(method="POST", query_string="a=1&a=2&b=x", data={"f": "v", "a": "3"})
    assert request.query.a == "1" and request.query.getall("a") == ["1", "2"]
    assert request.query.missing == ""
    assert request.GET.get("b") == "x"
    assert request.forms.f == "v" and request.POST.get("f") == "v"
    assert request.params.getall("a") == ["1", "2", "3"]
    assert request.query_string == "a=1&a=2&b=x"
    assert request.args.getlist("a") == ["1", "2"]  # werkzeug's own API stays reachable


def test_headers_iterate_names_and_ignore_case():
    request = bottle_request(headers={"X-One": "1", "Cookie": "c=v"})
    assert "X-One" in list(request.headers)
    assert request.headers["x-one"] == "1"
    assert dict(request.headers)["X-One"] == "1"
    assert request.get_header("X-ONE") == "1" and request.get_header("nope", "d") == "d"
    with pytest.raises(KeyError):
        request.headers["nope"]  # noqa: B018
    assert request.get_cookie("c") == "v" and request.get_cookie("x", "d") == "d"


def test_other_attributes_are_the_werkzeug_requests():
    request = bottle_request(path="/a/b", method="PUT", data=b"x")
    assert (request.method, request.path, request.fullpath) == ("PUT", "/a/b", "/a/b")
    assert request.get_data() == b"x" and request.url.endswith("/a/b")
