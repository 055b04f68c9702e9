from __future__ import annotations

import base64
import io
from collections.abc import Iterator
from contextlib import contextmanager

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
    # bottle gives a key's most recent value (werkzeug its first).
    assert request.query.a == "2" and request.query["a"] == "2" and request.query.getall("a") == ["1", "2"]
    assert request.query.get("a", index=0) == "1" and request.query.get(key="a", type=int) == 2
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


# -- the same answers as bottle itself, for the same request ----------------------

bottle = pytest.importorskip("bottle")

def multipart() -> dict:
    return EnvironBuilder(
        method="POST",
        query_string="q=1&q=2&only=x",
        data={
            "category": "pics",
            "tag": ["a", "b"],
            "upload": (io.BytesIO(b"\x89PNG data"), "../../etc/Caf\u00e9 photo (1).png", "image/png"),
        },
    ).get_environ()


@contextmanager
def both() -> Iterator[tuple[BottleRequest, bottle.BaseRequest]]:
    """Our request and bottle's own over the same multipart request; their files closed after."""
    ours, theirs = BottleRequest(FunctionRequest(multipart())), bottle.BaseRequest(multipart())
    try:
        yield ours, theirs
    finally:
        ours.close()
        for upload in theirs.POST.values():
            if isinstance(upload, bottle.FileUpload):
                upload.file.close()


@pytest.mark.parametrize(
    "read",
    [
        pytest.param(lambda r: r.query.q, id="attribute-is-the-last-value"),
        pytest.param(lambda r: r.query["q"], id="item-is-the-last-value"),
        pytest.param(lambda r: r.query.get("q"), id="get-is-the-last-value"),
        pytest.param(lambda r: r.query.get("q", index=0), id="get-with-index"),
        pytest.param(lambda r: r.query.get("q", type=int), id="get-with-type"),
        pytest.param(lambda r: r.query.get("only", type=int, default="d"), id="get-failed-cast-is-default"),
        pytest.param(lambda r: r.query.get(key="missing"), id="get-by-keyword"),
        pytest.param(lambda r: r.query.getall("q"), id="getall"),
        pytest.param(lambda r: r.query.nothing, id="missing-attribute-is-empty"),
        pytest.param(lambda r: sorted(r.query), id="iteration"),
        pytest.param(lambda r: dict(r.query), id="dict"),
        pytest.param(lambda r: "q" in r.query, id="contains"),
        pytest.param(lambda r: r.forms.category, id="forms"),
        pytest.param(lambda r: r.forms.getall("tag"), id="forms-getall"),
        pytest.param(lambda r: "upload" in r.forms, id="forms-have-no-files"),
        pytest.param(lambda r: sorted(r.params), id="params-are-query-and-forms"),
        pytest.param(lambda r: sorted(r.POST), id="post-is-forms-and-files"),
        pytest.param(lambda r: sorted(r.files), id="files"),
        pytest.param(lambda r: r.files.upload.name, id="upload-name"),
        pytest.param(lambda r: r.files.get("upload").raw_filename, id="upload-raw-filename"),
        pytest.param(lambda r: r.files["upload"].filename, id="upload-filename-sanitised"),
        pytest.param(lambda r: r.files["upload"].content_type, id="upload-content-type"),
        pytest.param(lambda r: r.files["upload"].content_length, id="upload-content-length"),
        pytest.param(lambda r: r.files["upload"].headers["Content-Type"], id="upload-headers"),
        pytest.param(lambda r: r.files["upload"].get_header("content-type"), id="upload-get-header"),
        pytest.param(lambda r: r.files["upload"].file.read(), id="upload-file"),
        pytest.param(lambda r: r.get_header("Content-Type").split(";")[0], id="get-header"),
        pytest.param(lambda r: r.get_header("X-Missing", "d"), id="get-header-default"),
        pytest.param(lambda r: sorted(r.headers), id="header-names"),
        pytest.param(lambda r: dict(r.headers)["Host"], id="dict-of-headers"),
        pytest.param(lambda r: r.body.read()[:20], id="body-read"),
        pytest.param(lambda r: r.json, id="json-of-a-form-is-none"),
        pytest.param(lambda r: r.method, id="method"),
        pytest.param(lambda r: r.query_string, id="query-string"),
        pytest.param(lambda r: r.content_type.split(";")[0], id="content-type"),
        pytest.param(lambda r: r.content_length > 0, id="content-length"),
        pytest.param(lambda r: r.path, id="path"),
        pytest.param(lambda r: r.fullpath, id="fullpath"),
        pytest.param(lambda r: r.script_name, id="script-name"),
        pytest.param(lambda r: r.url, id="url"),
        pytest.param(lambda r: tuple(r.urlparts), id="urlparts"),
        pytest.param(lambda r: r.remote_addr, id="remote-addr"),
        pytest.param(lambda r: r.chunked, id="chunked"),
        pytest.param(lambda r: r.is_xhr, id="is-xhr"),
        pytest.param(lambda r: r.auth, id="no-auth"),
        pytest.param(lambda r: r.get_cookie("nope", "d"), id="get-cookie-default"),
    ],
)
def test_reads_as_bottle_reads(read):
    with both() as (ours, theirs):
        assert read(ours) == read(theirs)


def test_the_upload_is_there():
    with both() as (ours, _):
        assert ours.files["upload"].file.read() == b"\x89PNG data"
        assert ours.files["upload"].filename == "Cafe-photo-1.png"


def test_vars_of_headers_and_body_work_as_in_kymas_test_functions():
    with both() as (ours, theirs):
        assert "environ" in vars(ours.headers) and "environ" in vars(theirs.headers)
        vars(ours.body)  # Kyma's own test functions print this; bottle's body is a BytesIO
        vars(theirs.body)


@pytest.mark.parametrize(
    "raw",
    [
        "../../etc/passwd", "C:\\Users\\me\\report final.pdf", "Café photo (1).png", "  ..hidden.. ", "",
        "日本語.txt", "a" * 300 + ".txt", "x--  --y", "-dash-", "ok_name-1.tar.gz",
    ],
)
def test_filename_is_sanitised_as_bottle_does(raw):
    from funcwsgi.compat.bottle import FileUpload

    assert FileUpload(io.BytesIO(), "f", raw).filename == bottle.FileUpload(None, "f", raw).filename


def test_save_as_bottle_saves(tmp_path):
    with both() as (ours, _):
        check_save(ours.files["upload"], tmp_path)


def check_save(upload, tmp_path):
    upload.save(str(tmp_path))  # a folder: the sanitised name inside it
    saved = tmp_path / upload.filename
    assert saved.read_bytes() == b"\x89PNG data"
    with pytest.raises(OSError, match="File exists"):
        upload.save(str(saved))
    saved.write_bytes(b"old")
    upload.save(saved, overwrite=True, chunk_size=3)  # a path-like too, read in small chunks
    assert saved.read_bytes() == b"\x89PNG data"
    target = io.BytesIO()
    upload.save(target)
    assert target.getvalue() == b"\x89PNG data"


@pytest.mark.parametrize(
    "builder",
    [
        pytest.param({"path": "/deep/p%20ath", "base_url": "http://example.org/mount/"}, id="mounted"),
        pytest.param({"headers": {"X-Forwarded-Proto": "https", "X-Forwarded-Host": "api.example", "X-Forwarded-For": "10.0.0.1, 10.0.0.2"}}, id="forwarded"),
        pytest.param({"headers": {"Authorization": "Basic " + base64.b64encode(b"ada:s3:cret").decode(), "X-Requested-With": "XMLHttpRequest"}}, id="auth-and-xhr"),
        pytest.param({"headers": {"Authorization": "Basic !!!"}, "environ_overrides": {"REMOTE_USER": "grace"}}, id="remote-user"),
        pytest.param({"headers": {"Cookie": "a=1; b=2", "Transfer-Encoding": "chunked"}, "environ_overrides": {"REMOTE_ADDR": "192.0.2.7"}}, id="cookies-chunked"),
        pytest.param({"environ_overrides": {"HTTP_HOST": "", "SERVER_NAME": "srv", "SERVER_PORT": "8080"}}, id="no-host"),
    ],
)
def test_request_names_as_bottle_gives_them(builder):
    def environ():
        return EnvironBuilder(**builder).get_environ()

    ours, theirs = BottleRequest(FunctionRequest(environ())), bottle.BaseRequest(environ())
    for name in ("path", "fullpath", "script_name", "url", "urlparts", "remote_addr", "remote_route", "auth", "is_xhr", "is_ajax", "chunked", "content_length", "content_type"):
        assert getattr(ours, name) == getattr(theirs, name), name
    assert dict(ours.cookies) == dict(theirs.cookies) and ours.get_cookie("a") == theirs.get_cookie("a")


def test_path_and_header_values_are_read_as_utf8():
    # PEP 3333: PATH_INFO and HTTP_* hold the request's bytes as latin-1 strings; bottle re-read them as UTF-8.
    environ = EnvironBuilder(path="/").get_environ()
    environ["PATH_INFO"] = "/café".encode().decode("latin-1")
    environ["HTTP_X_UTF"] = "Zoë".encode().decode("latin-1")
    request = BottleRequest(FunctionRequest(environ))
    assert request.path == "/café" and request.fullpath == "/café" and request.url.endswith("/caf%C3%A9")
    assert request.headers["X-Utf"] == request.headers.get("x-utf") == request.get_header("X-Utf") == "Zoë"
    assert request.headers.getall("X-Utf") == ["Zoë"] and request.headers.raw("X-Utf") == environ["HTTP_X_UTF"]
    environ["PATH_INFO"] = "/\xff"  # not UTF-8: the replacement character
    assert BottleRequest(FunctionRequest(environ)).path == "/\ufffd"
