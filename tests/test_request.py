"""FunctionRequest: werkzeug's request, werkzeug imported and its __init__ work done on first use."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest
from werkzeug.test import EnvironBuilder
from werkzeug.wrappers import Request

from funcwsgi import request as requests
from funcwsgi.request import FunctionRequest, read_body, werkzeug_parts

_COMPUTED_IN_INIT = werkzeug_parts()[1]


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


NEVER_READ = """
import sys
from funcwsgi.request import FunctionRequest, get_or_create_request
environ = {"REQUEST_METHOD": "GET", "PATH_INFO": "/"}
request = FunctionRequest(environ)
request.cloud_event = None
assert get_or_create_request(environ) is request and request.cloud_event is None and request.environ is environ
print(sorted(name for name in sys.modules if name.startswith("werkzeug")))
request.path
print(type(request).__name__, type(request).__mro__[2].__module__)
"""


def test_a_request_never_read_imports_no_werkzeug():
    result = subprocess.run([sys.executable, "-c", NEVER_READ], capture_output=True, text=True, timeout=60, check=True)
    assert result.stdout.splitlines() == ["[]", "FunctionRequest werkzeug.wrappers.request"]


FIRST_READS_AT_ONCE = """
import threading
from funcwsgi.request import FunctionRequest
from funcwsgi.response import new_headers
environ = {"REQUEST_METHOD": "GET", "PATH_INFO": "/x", "SERVER_NAME": "a", "SERVER_PORT": "80", "wsgi.url_scheme": "http"}
barrier = threading.Barrier(16)
errors = []
def first_read(number):
    barrier.wait()
    try:
        new_headers() if number % 3 == 0 else FunctionRequest(dict(environ)).path
    except Exception as error:
        errors.append(repr(error))
threads = [threading.Thread(target=first_read, args=(number,)) for number in range(16)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print(errors)
"""


def test_sixteen_call_threads_reading_their_first_requests_at_once_all_get_werkzeug_whole():
    """werkzeug's modules import one another: imported by two threads at once, one saw the other's half-made module
    (ImportError, a 500 for the first calls of a worker: tests/reliability/soak.py found it)."""
    for _ in range(3):
        result = subprocess.run([sys.executable, "-c", FIRST_READS_AT_ONCE], capture_output=True, text=True, timeout=60, check=True)
        assert result.stdout.strip() == "[]"


def test_the_first_read_makes_the_same_object_a_werkzeug_request():
    plain = type.__call__(FunctionRequest, environ())  # as made before werkzeug was imported
    assert type(plain) is FunctionRequest and not isinstance(plain, Request)
    plain.flag = "kept"
    assert plain.args.to_dict() == {"a": "1", "b": "two"}
    assert isinstance(plain, Request) and isinstance(plain, FunctionRequest)
    assert type(plain).__name__ == "FunctionRequest"
    assert plain.flag == "kept" and plain.environ["werkzeug.request"] is plain
    assert type(requests.make_request(environ())) is type(plain)  # later calls' requests have werkzeug's API from the start


@pytest.mark.parametrize("use", ["repr", "with", "dir"])
def test_special_methods_of_werkzeug_work_before_any_read(use):
    request = type.__call__(FunctionRequest, environ())
    if use == "repr":
        assert repr(request) == "<FunctionRequest 'http://example.test:8443/mount/api/items/é?a=1&b=two' [POST]>"
    elif use == "with":
        with request as entered:
            assert entered is request
    else:
        assert {"args", "get_json", "cloud_event", "body"} <= set(dir(request))
    assert isinstance(request, Request)


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
