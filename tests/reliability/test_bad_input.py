"""The bad-input matrix: what a caller (or the function's own answer) can get wrong, with the status and log line.

In-process cases go through the whole middleware stack with werkzeug's test
client; the cases only a real HTTP parser can see (sizes, framing, bytes
that are not UTF-8, what reaches the wire) run on gunicorn, waitress and
granian. Every answer passes the leak check. docs/reliability.md lists them.
"""

from __future__ import annotations

import json
import logging
import re

import pytest

from funcwsgi import make_app

from ..support.paths import function_folder
from ..support.sockets import status_of
from .harness import ADAPTERS, LEAKS, serve

LIMIT = 200_000  # in-process body limit: large enough for a deeply nested JSON document
CE = {"ce-specversion": "1.0", "ce-id": "1", "ce-type": "order.created", "ce-source": "/shop"}
STRUCTURED = "application/cloudevents+json"


def structured(**attributes: object) -> str:
    return json.dumps({"specversion": "1.0", "id": "1", "type": "order.created", "source": "/shop", **attributes})


# (id, method, path, request options, status, body starts with, log line)
IN_PROCESS = [
    ("json-malformed", "POST", "/json", {"data": "{bad", "content_type": "application/json"}, 400, "Bad Request: The request body is not valid JSON.", "POST /json 400"),
    ("json-wrong-content-type", "POST", "/json", {"data": '{"a": 1}', "content_type": "text/plain"}, 400, "Bad Request: The request body is not valid JSON.", "POST /json 400"),
    ("json-not-utf8", "POST", "/json", {"data": b'{"a": "\xff"}', "content_type": "application/json"}, 400, "Bad Request: The request body is not valid JSON.", "POST /json 400"),
    ("json-nested-too-deeply", "POST", "/json", {"data": "[" * 100_000, "content_type": "application/json"}, 400, "Bad Request: The request body is not valid JSON.", "POST /json 400"),
    ("cloudevent-binary-missing-id", "POST", "/event", {"data": "{}", "headers": {k: v for k, v in CE.items() if k != "ce-id"}}, 400, "Bad Request: missing required CloudEvent header(s): ce-id", "POST /event 400"),
    ("cloudevent-binary-empty-source", "POST", "/event", {"data": "{}", "headers": {**CE, "ce-source": ""}}, 400, "Bad Request: missing required CloudEvent header(s): ce-source", "POST /event 400"),
    ("cloudevent-binary-bad-specversion", "POST", "/event", {"data": "{}", "headers": {**CE, "ce-specversion": "9.9"}}, 400, "Bad Request: invalid CloudEvent: specversion must be one of 1.0, 0.3", "POST /event 400"),
    ("cloudevent-binary-bad-time", "POST", "/event", {"data": "{}", "headers": {**CE, "ce-time": "yesterday"}}, 400, "Bad Request: invalid CloudEvent", "POST /event 400"),
    ("cloudevent-structured-not-json", "POST", "/event", {"data": "{", "content_type": STRUCTURED}, 400, "Bad Request: the structured CloudEvent is not valid JSON", "POST /event 400"),
    ("cloudevent-structured-not-object", "POST", "/event", {"data": "[1]", "content_type": STRUCTURED}, 400, "Bad Request: the structured CloudEvent must be a JSON object", "POST /event 400"),
    ("cloudevent-structured-missing-attributes", "POST", "/event", {"data": '{"specversion": "1.0"}', "content_type": STRUCTURED}, 400, "Bad Request: missing required CloudEvent attribute(s): id, source, type", "POST /event 400"),
    ("cloudevent-structured-not-utf8", "POST", "/event", {"data": structured(id="?").encode().replace(b"?", b"\xff"), "content_type": STRUCTURED}, 400, "Bad Request: the structured CloudEvent is not valid JSON", "POST /event 400"),
    ("cloudevent-structured-nested-too-deeply", "POST", "/event", {"data": "[" * 100_000, "content_type": STRUCTURED}, 400, "Bad Request: the structured CloudEvent is not valid JSON", "POST /event 400"),
    ("cloudevent-structured-bad-time", "POST", "/event", {"data": structured(time=5), "content_type": STRUCTURED}, 400, "Bad Request: invalid CloudEvent", "POST /event 400"),
    ("body-over-limit-content-length", "POST", "/size", {"data": b"x" * (LIMIT + 1)}, 413, f"Request Entity Too Large: the request body is larger than {LIMIT} bytes", "POST /size 413"),
    ("path-percent-encoded", "GET", "/path/a%2Fb%20c", {}, 200, '{"path": "/path/a/b c"', "GET /path/a/b c 200"),
    ("path-percent-encoded-not-utf8", "GET", "/path/%FF%FE", {}, 200, '{"path": "/path/\\ufffd\\ufffd"', "GET /path/"),
    ("path-percent-encoded-nul", "GET", "/path/a%00b", {}, 200, '{"path": "/path/a\\u0000b"', "GET /path/a\x00b 200"),
    ("query-not-utf8", "GET", "/path?name=%FF&x=%", {}, 200, '{"path": "/path", "args": {"name": "%FF", "x": "%"}}', "GET /path 200"),
    ("function-header-with-crlf", "GET", "/bad-header", {}, 500, "Internal Server Error", "ValueError: Header values must not contain newline characters."),
    ("function-returns-unsupported-type", "GET", "/unsupported", {}, 500, "Internal Server Error", "the function returned a builtins.object, which cannot be a response body"),
    ("head-on-a-failing-call", "HEAD", "/fail", {}, 500, "", "Function failed on HEAD /fail"),
    ("unknown-method", "BREW", "/", {}, 200, "hello", "BREW / 200"),
]


@pytest.fixture(scope="module")
def client():
    from werkzeug.test import Client

    return Client(make_app(environ={"SERVER_ACCESS_LOG": "true"}, handler_folder=function_folder("serving"), server_max_body_size=LIMIT))


@pytest.mark.parametrize(("method", "path", "options", "status", "body", "log_line"), [case[1:] for case in IN_PROCESS], ids=[case[0] for case in IN_PROCESS])
def test_bad_input_in_process(client, caplog, method, path, options, status, body, log_line):
    with caplog.at_level(logging.INFO):
        response = LEAKS.werkzeug(client.open(path, method=method, **options), f"{method} {path}")
    assert response.status_code == status
    assert response.get_data(as_text=True).startswith(body)
    assert log_line in caplog.text


def test_a_callers_request_id_that_cannot_be_echoed_is_replaced(client):
    for sent in ("a" * 200, "ab\x7fcd", "ab\tcd", "é"):
        response = client.get("/", headers={"X-Request-Id": sent})
        assert response.status_code == 200
        assert re.fullmatch(r"[0-9a-f]{32}", response.headers["X-Request-Id"]), sent
    assert client.get("/", headers={"X-Request-Id": "order-7"}).headers["X-Request-Id"] == "order-7"


@pytest.fixture(scope="module")
def cors_client():
    from werkzeug.test import Client

    app = make_app(environ={"SERVER_CORS_ORIGINS": "https://shop.example"}, handler_folder=function_folder("serving"))
    return Client(app)


def preflight(app, origin: str, request_headers: str):
    """A preflight as the server hands it over, bytes a test client would refuse to send included."""
    from werkzeug.test import EnvironBuilder, run_wsgi_app
    from werkzeug.wrappers import Response

    environ = EnvironBuilder(path="/", method="OPTIONS").get_environ()
    environ.update(HTTP_ORIGIN=origin, HTTP_ACCESS_CONTROL_REQUEST_METHOD="POST", HTTP_ACCESS_CONTROL_REQUEST_HEADERS=request_headers)
    body, status, headers = run_wsgi_app(app, environ)
    return LEAKS.werkzeug(Response(b"".join(body), status=status, headers=headers), "preflight")


def test_cors_echoes_only_header_names_and_allowed_origins(cors_client):
    app = cors_client.application
    fine = preflight(app, "https://shop.example", "content-type, x-trace")
    assert (fine.status_code, fine.headers["Access-Control-Allow-Headers"]) == (204, "content-type, x-trace")
    for smuggled in ("a\r\nSet-Cookie: x=1", "a, b c", "a;b", "x\x00"):
        answer = preflight(app, "https://shop.example", smuggled)
        assert answer.status_code == 204
        assert "Access-Control-Allow-Headers" not in answer.headers
        assert all("\n" not in value and "Set-Cookie" not in value for _, value in answer.headers.items())
    other = preflight(app, "https://evil.example\r\nSet-Cookie: x=1", "content-type")
    assert other.status_code == 403 and "Access-Control-Allow-Origin" not in other.headers
    plain = cors_client.get("/", headers={"Origin": "https://evil.example"})
    assert "Access-Control-Allow-Origin" not in plain.headers


# -- on the wire: what a real HTTP parser sees ----------------------------------------------

HUGE_HEADER = b"a" * 1_000_000
LONG_PATH = b"a" * 300_000
HOST = b"Host: x\r\nConnection: close\r\n"

# (id, raw request, {adapter: status}, reaches the function)
ON_THE_WIRE = [
    ("request-header-too-large", b"GET /never-header-size HTTP/1.1\r\n" + HOST + b"X-Big: " + HUGE_HEADER + b"\r\n\r\n", {"gunicorn": 431, "waitress": 431, "granian": 431}, False),
    ("too-many-headers", b"GET /header-count HTTP/1.1\r\n" + HOST + b"".join(b"X-%d: 1\r\n" % i for i in range(300)) + b"\r\n", {"gunicorn": 431, "waitress": 200, "granian": 431}, None),
    ("request-line-too-long", b"GET /never-line/" + LONG_PATH + b" HTTP/1.1\r\n" + HOST + b"\r\n", {"gunicorn": 414, "waitress": 431, "granian": 414}, False),
    ("raw-path-not-utf8", b"GET /never-raw-path/\xff\xfe HTTP/1.1\r\n" + HOST + b"\r\n", {"gunicorn": 400, "waitress": 400, "granian": 400}, False),
    ("content-length-not-a-number", b"POST /never-length-text HTTP/1.1\r\n" + HOST + b"Content-Length: abc\r\n\r\nabc", {"gunicorn": 400, "waitress": 400, "granian": 400}, False),
    ("content-length-negative", b"POST /never-length-negative HTTP/1.1\r\n" + HOST + b"Content-Length: -1\r\n\r\nabc", {"gunicorn": 400, "waitress": 400, "granian": 400}, False),
    ("content-length-and-chunked", b"POST /size HTTP/1.1\r\n" + HOST + b"Content-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", {"gunicorn": 400, "waitress": 200, "granian": 200}, None),
    ("not-http", b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03/never-tls\r\n\r\n", {"gunicorn": 400, "waitress": 400, "granian": 400}, False),
    ("nul-in-a-header", b"GET /never-nul HTTP/1.1\r\n" + HOST + b"X-Request-Id: ab\x00cd\r\n\r\n", {"gunicorn": 400, "waitress": 400, "granian": 400}, False),
    ("function-header-with-crlf", b"GET /bad-header HTTP/1.1\r\n" + HOST + b"\r\n", {"gunicorn": 500, "waitress": 500, "granian": 500}, True),
    ("function-header-not-latin-1", b"GET /bad-header?value=%E2%82%AC HTTP/1.1\r\n" + HOST + b"\r\n", {"gunicorn": 500, "waitress": 500, "granian": 200}, True),
]


@pytest.fixture(scope="module", params=ADAPTERS)
def served(request, tmp_path_factory):
    running = serve(request.param, tmp_path_factory.mktemp(request.param))
    yield running
    running.server.stop()


@pytest.mark.parametrize(("raw", "statuses", "reaches_function"), [case[1:] for case in ON_THE_WIRE], ids=[case[0] for case in ON_THE_WIRE])
def test_bad_input_on_the_wire(served, raw, statuses, reaches_function):
    answer = served.raw(raw)
    assert status_of(answer) == statuses[served.adapter], answer[:300]
    head = answer.split(b"\r\n\r\n", 1)[0]
    assert b"evil" not in answer and b"Set-Cookie" not in head  # no header injection reaches the wire
    if reaches_function is False:
        path = re.search(rb"/never[\w-]*", raw).group(0).decode()  # type: ignore[union-attr]
        paths = [record.get("path", "") for record in served.records() if record.get("logger") == "funcwsgi.access"]
        assert paths and not any(logged.startswith(path) for logged in paths)  # refused by the server: the function never ran
    assert served.get("/").text == "hello"
