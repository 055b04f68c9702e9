"""FunctionRequest: werkzeug's request, with werkzeug's __init__ work deferred to first use."""

from __future__ import annotations

import io

import pytest
from werkzeug.test import EnvironBuilder
from werkzeug.wrappers import Request

from funcwsgi.request import _COMPUTED_IN_INIT, FunctionRequest, read_body


def environ() -> dict:
    return EnvironBuilder(
        path="/api/items/%C3%A9",
        base_url="http://example.test:8443/mount/",
        query_string="a=1&b=two",
        headers={"X-Test": "yes"},
        environ_base={"REMOTE_ADDR": "10.1.2.3"},
        method="post",
        data=b"payload",
    ).get_environ()


def test_every_value_werkzeug_computes_is_the_same_on_first_read():
    reference = Request(environ())
    request = FunctionRequest(environ())
    assert _COMPUTED_IN_INIT >= {"method", "path", "headers", "root_path", "query_string"}
    for name in sorted(_COMPUTED_IN_INIT - {"headers"}):
        assert getattr(request, name) == getattr(reference, name), name
    assert dict(request.headers) == dict(reference.headers)
    assert request.url == reference.url
    assert request.args.to_dict() == {"a": "1", "b": "two"}
    assert request.body == b"payload"


def test_nothing_is_computed_until_read():
    request = FunctionRequest(environ())
    assert not _COMPUTED_IN_INIT & set(vars(request))
    assert request.environ["werkzeug.request"] is request
    assert request.method == "POST"
    assert _COMPUTED_IN_INIT <= set(vars(request))


def test_a_value_set_before_any_read_is_kept():
    request = FunctionRequest(environ())
    request.path = "/rewritten"
    assert request.method == "POST"
    assert request.path == "/rewritten"


def test_unknown_attributes_raise_attribute_error():
    request = FunctionRequest(environ())
    with pytest.raises(AttributeError, match="'FunctionRequest' object has no attribute 'nope'"):
        request.nope  # noqa: B018
    assert not hasattr(request, "nope")
    assert request.cloud_event is None


class _Endless(io.BytesIO):
    """A client's stream that never ends: reading past what it sent would wait forever."""

    def read(self, size: int | None = -1) -> bytes:
        if size is None or size < 0:
            raise AssertionError("read to the end of a stream that has no end")
        return super().read(size)


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        pytest.param({"wsgi.input": io.BytesIO(b"hello, rest"), "CONTENT_LENGTH": "5"}, b"hello", id="length"),
        pytest.param({"wsgi.input": io.BytesIO(b"chunked"), "wsgi.input_terminated": True}, b"chunked", id="terminated"),
        pytest.param({"wsgi.input": _Endless(b"never ends")}, b"", id="no-length-not-terminated"),
        pytest.param({"wsgi.input": _Endless(b"x"), "CONTENT_LENGTH": ""}, b"", id="empty-length"),
        pytest.param({}, b"", id="no-stream"),
    ],
)
def test_read_body_reads_only_what_the_request_framed(environ, expected):
    assert read_body(environ) == expected
