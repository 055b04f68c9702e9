from __future__ import annotations

import io

import pytest

from funcwsgi.middleware.body_limit import BodyLimitMiddleware

from ..support.wsgi import StartResponse, drain


def echo_size(environ, start_response):
    body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [str(len(body)).encode()]


def call(app, body: bytes, **environ):
    """(the status, the whole body) of one call, its body closed as a server closes it."""
    start = StartResponse()
    base = {"REQUEST_METHOD": "POST", "wsgi.input": io.BytesIO(body)}
    base.update(environ)
    data = drain(app(base, start))
    return start.status, data


@pytest.mark.parametrize(
    ("size", "environ", "status"),
    [
        pytest.param(10, {"CONTENT_LENGTH": "10"}, "200 OK", id="declared-at-the-limit"),
        pytest.param(11, {"CONTENT_LENGTH": "11"}, "413 Request Entity Too Large", id="declared-over"),
        pytest.param(10, {"HTTP_TRANSFER_ENCODING": "chunked"}, "200 OK", id="chunked-at-the-limit"),
        pytest.param(11, {"HTTP_TRANSFER_ENCODING": "chunked"}, "413 Request Entity Too Large", id="chunked-over"),
        pytest.param(11, {"wsgi.input_terminated": True}, "413 Request Entity Too Large", id="terminated-input-over"),
        pytest.param(0, {}, "200 OK", id="no-body"),
    ],
)
def test_bodies_over_the_limit_get_413_before_the_function_runs(size, environ, status):
    ran = []

    def inner(environ, start_response):
        ran.append(True)
        return echo_size(environ, start_response)

    app = BodyLimitMiddleware(inner, max_bytes=10)
    answered, body = call(app, b"x" * size, **environ)
    assert answered == status
    if status.startswith("413"):
        assert body == b"Request Entity Too Large: the request body is larger than 10 bytes"
        assert not ran
    else:
        assert body == str(size).encode()


def test_a_chunked_body_reaches_the_function_whole_with_a_content_length():
    app = BodyLimitMiddleware(echo_size, max_bytes=1 << 20)
    data = bytes(range(256)) * 1000
    seen = {}

    def inner(environ, start_response):
        seen["length"] = environ["CONTENT_LENGTH"]
        seen["data"] = environ["wsgi.input"].read()
        start_response("200 OK", [])
        return [b""]

    response = BodyLimitMiddleware(inner, max_bytes=1 << 20)(
        {"REQUEST_METHOD": "POST", "wsgi.input": io.BytesIO(data), "HTTP_TRANSFER_ENCODING": "chunked"}, lambda *a: None
    )
    response.close()
    assert seen == {"length": str(len(data)), "data": data}
    assert call(app, data, HTTP_TRANSFER_ENCODING="chunked")[1] == str(len(data)).encode()


class BrokenChunks(io.RawIOBase):
    """A server's de-chunking input that gives up on a malformed chunk, as werkzeug's does."""

    def read(self, size=-1):
        raise OSError("Invalid chunk header")


def test_a_chunked_body_the_server_cannot_de_chunk_is_refused_with_400_before_the_function_runs():
    ran = []
    start = StartResponse()

    def inner(environ, start_response):
        ran.append(True)
        start_response("200 OK", [])
        return [b""]

    environ = {"REQUEST_METHOD": "POST", "wsgi.input": BrokenChunks(), "HTTP_TRANSFER_ENCODING": "chunked"}
    body = BodyLimitMiddleware(inner, max_bytes=1 << 20)(environ, start)
    assert start.statuses == ["400 Bad Request"] and not ran
    assert b"".join(body) == b"Bad Request: the chunked request body is malformed"


def test_a_malformed_content_length_is_left_to_the_server():
    def inner(environ, start_response):
        start_response("200 OK", [])
        return [environ["CONTENT_LENGTH"].encode()]

    status, body = call(BodyLimitMiddleware(inner, max_bytes=10), b"", CONTENT_LENGTH="lots")
    assert (status, body) == ("200 OK", b"lots")


def test_head_gets_no_body():
    status, body = call(BodyLimitMiddleware(echo_size, max_bytes=1), b"xx", CONTENT_LENGTH="2", REQUEST_METHOD="HEAD")
    assert (status, body) == ("413 Request Entity Too Large", b"")


def test_in_the_stack_by_default_and_left_out_with_0(client_for):
    assert "body-limit" in client_for("hello").application.layers
    assert "body-limit" not in client_for("hello", server_max_body_size=0).application.layers
    client = client_for("req_res", server_max_body_size=5)
    assert client.post("/echo", data=b"12345").data == b"12345"
    assert client.post("/echo", data=b"123456").status_code == 413


def test_a_get_that_says_nothing_of_a_body_is_passed_through_unread():
    # gunicorn marks every request `wsgi.input_terminated`; a GET without
    # Content-Length or Transfer-Encoding has no body to spool.
    stream = io.BytesIO(b"")
    seen = {}

    def inner(environ, start_response):
        seen["input"] = environ["wsgi.input"]
        start_response("200 OK", [])
        return [b""]

    environ = {"REQUEST_METHOD": "GET", "wsgi.input": stream, "wsgi.input_terminated": True}
    BodyLimitMiddleware(inner, max_bytes=10)(environ, lambda *args: None)
    assert seen["input"] is stream and "CONTENT_LENGTH" not in environ


def test_the_spool_of_a_chunked_body_is_closed_with_the_response():
    spools = []

    def inner(environ, start_response):
        spools.append(environ["wsgi.input"])
        start_response("200 OK", [])
        return [b"ok"]

    environ = {"REQUEST_METHOD": "POST", "wsgi.input": io.BytesIO(b"x" * 10), "HTTP_TRANSFER_ENCODING": "chunked"}
    response = BodyLimitMiddleware(inner, max_bytes=100)(environ, lambda *a: None)
    assert not spools[0].closed  # the function, and layers inside, may still read it
    assert list(response) == [b"ok"]
    response.close()
    assert spools[0].closed


def test_the_spool_is_closed_when_the_app_raises():
    spools = []

    def inner(environ, start_response):
        spools.append(environ["wsgi.input"])
        raise RuntimeError("boom")

    environ = {"REQUEST_METHOD": "POST", "wsgi.input": io.BytesIO(b"x"), "HTTP_TRANSFER_ENCODING": "chunked"}
    with pytest.raises(RuntimeError):
        BodyLimitMiddleware(inner, max_bytes=100)(environ, lambda *a: None)
    assert spools[0].closed


# Cases the mutation run (make mutation, docs/reliability.md) found untested.


class ShortReads(io.BytesIO):
    """A request body that arrives 50 bytes at a time, as from a socket, counting what was read."""

    taken = 0

    def read(self, size=-1):
        chunk = super().read(50 if size is None or size < 0 else min(size, 50))
        self.taken += len(chunk)
        return chunk


@pytest.mark.parametrize("size", [100, 101, 10_000])
def test_a_chunked_body_is_read_no_further_than_one_byte_past_the_limit(size):
    """Mutations caught: the read size ``max_bytes + 1 - total`` made ``+ total``, ``* total`` or
    ``+ 2``, and a ``CHUNK`` of -960 bytes (a negative read takes the whole body)."""
    source = ShortReads(b"x" * size)
    call(BodyLimitMiddleware(echo_size, max_bytes=100), b"", **{"HTTP_TRANSFER_ENCODING": "chunked", "wsgi.input": source})
    assert source.taken == min(size, 101)


@pytest.mark.parametrize(("size", "on_disk"), [(1 << 20, False), ((1 << 20) + 1, True)])
def test_a_chunked_body_is_kept_in_memory_up_to_1_mib_then_on_disk(size, on_disk):
    """Mutations caught: ``SPOOL_IN_MEMORY`` other than 1 MiB (0 keeps every body in memory)."""
    seen = {}

    def inner(environ, start_response):
        seen["rolled"] = environ["wsgi.input"]._rolled  # SpooledTemporaryFile: spilled to a file
        return echo_size(environ, start_response)

    _, body = call(BodyLimitMiddleware(inner, max_bytes=2 << 20), b"x" * size, HTTP_TRANSFER_ENCODING="chunked")
    assert body == str(size).encode() and seen["rolled"] is on_disk


@pytest.mark.parametrize("declared", [1, 4095, 4096])
def test_declared_bodies_up_to_the_limit_pass(declared):
    """Mutations caught: ``int(declared) > max_bytes`` made ``!=`` or ``is not`` (a limit over 256: not a cached int)."""
    status, body = call(BodyLimitMiddleware(echo_size, max_bytes=4096), b"x" * declared, CONTENT_LENGTH=str(declared))
    assert (status, body) == ("200 OK", str(declared).encode())


@pytest.mark.parametrize("method", ["GET", "POST", "HEAD", "DELETE"])
def test_the_413_has_its_body_except_for_head(method):
    """Mutations caught: ``== "HEAD"`` made ``<=`` or ``is`` in the 413's body choice."""
    # Decoded, as a server parses the method off the wire: not the interned literal.
    status, body = call(BodyLimitMiddleware(echo_size, max_bytes=10), b"x" * 11, CONTENT_LENGTH="11", REQUEST_METHOD=method.encode().decode())
    assert status == "413 Request Entity Too Large"
    assert body == (b"" if method == "HEAD" else b"Request Entity Too Large: the request body is larger than 10 bytes")
