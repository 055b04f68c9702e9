"""HTTP's rules on every server: no body for HEAD, nothing of a body on 204/304, write() works, a PEP 3333 environ.

Each server is started once for the module. Responses are read with
``http.client`` on one kept-alive connection: a body sent after a HEAD response
would be read as the next response's status line.
"""

from __future__ import annotations

import http.client
import json
import socket
import urllib.parse

import pytest

from funcwsgi.adapters import HTTP_ADAPTERS

from ..support.processes import SERVE, Server, start

STREAMED = ["/generator", "/iterator", "/wsgi", "/wsgi-lazy", "/write", "/plain"]


#: (adapter, module of tests/functions/http_rules): every threaded server with the sync function, and
#: the two event-loop servers (gunicorn's edge worker, granian's ASGI) with the same answers from an async def.
SERVED = [(adapter, "handler") for adapter in HTTP_ADAPTERS] + [("gunicorn", "handler_async"), ("granian", "handler_async")]


@pytest.fixture(scope="module", params=SERVED, ids=lambda served: served[0] if served[1] == "handler" else f"{served[0]}-loop")
def server(request):
    adapter, module = request.param
    with start(SERVE, "http_rules", HANDLER_MODULE_NAME=module, SERVER_ADAPTER=adapter, SERVER_NUMTHREADS="2", SERVER_WORKERS="1") as running:
        yield running


def exchange(server: Server, *requests: tuple[str, str]) -> list[tuple[int, dict[str, str], bytes]]:
    """Each (method, path) in turn on one connection: (status, lower-cased headers, body)."""
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    answers = []
    try:
        for method, path in requests:
            connection.request(method, path)
            response = connection.getresponse()
            answers.append((response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()))
    finally:
        connection.close()
    return answers


@pytest.mark.parametrize("path", STREAMED)
def test_head_has_no_body_and_the_connection_stays_usable(server, path):
    (head_status, head_headers, head_body), (get_status, _, get_body) = exchange(server, ("HEAD", path), ("GET", path))
    assert (head_status, head_body) == (200, b"")
    assert get_status == 200 and get_body in {
        "/generator": [b"streamed body"], "/iterator": [b"iterated body"], "/wsgi": [b"passed through"],
        "/wsgi-lazy": [b"lazy body"], "/write": [b"written returned"], "/plain": [b"plain"],
    }[path]
    # The exchange after the HEAD parsed: nothing of a body was left on the connection.
    if "content-length" in head_headers and path == "/plain":
        assert head_headers["content-length"] == "5"  # a whole body's length is still said


@pytest.mark.parametrize(
    ("path", "status"),
    [("/no-content", 204), ("/no-content-with-body", 204), ("/not-modified", 304), ("/not-modified-tuple", 304)],
)
def test_no_content_headers_on_204_and_304(server, path, status):
    for method in ("GET", "HEAD"):
        ((got, headers, body), (after, _, after_body)) = exchange(server, (method, path), ("GET", "/plain"))
        assert (got, body) == (status, b"")
        assert "content-length" not in headers and "content-type" not in headers
        assert "transfer-encoding" not in headers
        assert (after, after_body) == (200, b"plain")
    if status == 304:
        assert exchange(server, ("GET", path))[0][1]["etag"] == '"v1"'


def test_write_works_on_every_server(server):
    [(status, _, body)] = exchange(server, ("GET", "/write"))
    assert (status, body) == (200, b"written returned")


def test_nothing_follows_a_streamed_head_answer(server):
    # waitress answers a HEAD of unknown length with Transfer-Encoding: chunked and then
    # used to send the chunked terminator, bytes a client reads as its next response.
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as connection:
        connection.sendall(b"HEAD /generator HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        received = b""
        while chunk := connection.recv(65536):
            received += chunk
    head, _, rest = received.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 ") and rest == b""


def test_the_environ_is_pep_3333_clean(server):
    # werkzeug's development server puts the peer's port in REMOTE_PORT as an int.
    [(status, _, body)] = exchange(server, ("POST", "/environ?a=1"))
    assert (status, json.loads(body)) == (200, {"problems": []})


def raw_exchange(server: Server, request: bytes) -> bytes:
    """``request`` as it is on a fresh connection; everything until the server closes (or 5 s of quiet)."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as connection:
        connection.sendall(request)
        received = b""
        try:
            while chunk := connection.recv(65536):
                received += chunk
        except TimeoutError:
            pass
    return received


@pytest.mark.parametrize("path", ["/interim?code=100", "/interim?code=101", "/interim?code=103", "/interim?code=199", "/interim-wsgi"])
def test_an_interim_status_as_the_functions_answer_is_its_500(server, path):
    """RFC 9110 section 15.2: 1xx is interim, a final answer must follow. A function that gives one as its answer has
    failed: 500, on every server (the edge used to send it as final and wait, the client hanging on it)."""
    [(status, _, body), (after, _, after_body)] = exchange(server, ("GET", path), ("GET", "/plain"))
    assert (status, body) == (500, b"Internal Server Error")
    assert (after, after_body) == (200, b"plain")
    assert server.wait_for_output("gave the interim status")


@pytest.mark.parametrize("host", ["a b", "x/y", "x@y", "x:abc"])
def test_a_host_that_is_no_host_is_answered_400(server, host):
    """RFC 9112 section 3.2: a server MUST answer 400 to a request whose Host has an invalid value."""
    answer = raw_exchange(server, b"GET /host HTTP/1.1\r\nHost: " + host.encode() + b"\r\nConnection: close\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 400 "), answer


@pytest.mark.parametrize(
    "host", ["example.com", "example.com:8080", "[::1]:8080", "127.0.0.1", "xn--bcher-kva.example", "localhost:", "internal_name.svc", ""]
)
def test_a_valid_host_is_served(server, host):
    answer = raw_exchange(server, b"GET /host HTTP/1.1\r\nHost: " + host.encode() + b"\r\nConnection: close\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 200 "), answer
    assert answer.endswith(b"\r\n\r\n" + host.encode()), answer


def test_an_empty_host_on_an_absolute_form_request_is_served(server):
    answer = raw_exchange(server, b"GET http://example.com/host HTTP/1.1\r\nHost: \r\nConnection: close\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 200 "), answer


def test_a_functions_connection_fields_give_way_to_the_servers_framing(server):
    """RFC 9110 section 7.6.1: framing and the connection are the server's. A function's Transfer-Encoding used to
    make granian close the connection unanswered, and waitress answer 500; every server now answers, framed its way."""
    [(status, headers, body), (after, _, after_body)] = exchange(server, ("GET", "/connection-fields"), ("GET", "/plain"))
    assert (status, body) == (200, b"abc")
    assert "keep-alive" not in headers and headers.get("transfer-encoding") != "chunked" or headers.get("content-length") is None
    assert (after, after_body) == (200, b"plain")


@pytest.mark.parametrize("values", [["-1"], ["+3"], [" 3"], ["0_3"], ["\uff13"], ["3", "4"]], ids=["minus", "plus", "blank", "underscore", "fullwidth", "differing"])
def test_a_content_length_that_is_no_length_is_the_functions_error(server, values):
    """RFC 9110 section 8.6: Content-Length = 1*DIGIT, one value. Python's int() takes the first four."""
    query = urllib.parse.urlencode([("v", value) for value in values])
    [(status, _, body), (after, _, after_body)] = exchange(server, ("GET", f"/length?{query}"), ("GET", "/plain"))
    assert (status, body) == (500, b"Internal Server Error")
    assert (after, after_body) == (200, b"plain")
