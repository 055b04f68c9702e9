"""AWS Lambda handlers behind API Gateway, served unchanged: payload formats 2.0 and 1.0, a SAM project."""

from __future__ import annotations

import json

import pytest
import requests

from ..support.paths import function_folder
from . import serving


@pytest.fixture(scope="module")
def servers():
    with serving(
        {
            # What the Lambda runtime sets: the handler string and the task root.
            "v2": {"_HANDLER": "app.lambda_handler", "LAMBDA_TASK_ROOT": function_folder("aws_lambda_http"), "AWS_LAMBDA_FUNCTION_NAME": "orders",
                   "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "512", "SERVER_CALL_TIMEOUT": "30"},
            # The python3.12 runtime and later marshal a result without escaping non-ASCII characters.
            "v2-py312": {"_HANDLER": "app.lambda_handler", "LAMBDA_TASK_ROOT": function_folder("aws_lambda_http"), "AWS_EXECUTION_ENV": "AWS_Lambda_python3.12"},
            "v1": {"_HANDLER": "app.lambda_handler", "LAMBDA_TASK_ROOT": function_folder("aws_lambda_http"), "LAMBDA_PAYLOAD_FORMAT": "1.0"},
            # `sam init`'s layout: template.yaml beside hello_world/app.py; nothing else set.
            "sam": {"HANDLER_FOLDER": function_folder("aws_lambda_sam")},
        }
    ) as running:
        yield running


def echo(response: requests.Response) -> dict:
    assert response.status_code == 200, response.text
    return response.json()


def test_v2_event_shape(servers):
    response = requests.post(
        servers["v2"].url + "/orders/7?a=1&a=2&b=x", data='{"n": 1}',
        headers={"Content-Type": "application/json", "X-Custom": "v", "Cookie": "c1=v1; c2=v2"},
    )
    got = echo(response)
    event = got["event"]
    assert event["version"] == "2.0" and event["routeKey"] == "$default"
    assert event["rawPath"] == "/orders/7" and event["rawQueryString"] == "a=1&a=2&b=x"
    assert event["queryStringParameters"] == {"a": "1,2", "b": "x"}
    assert event["cookies"] == ["c1=v1", "c2=v2"]
    assert event["headers"]["x-custom"] == "v" and "cookie" not in event["headers"]
    assert all(name == name.lower() for name in event["headers"])
    http = event["requestContext"]["http"]
    assert http["method"] == "POST" and http["path"] == "/orders/7" and http["sourceIp"] == "127.0.0.1"
    assert event["isBase64Encoded"] is False and got["body"] == '{"n": 1}'
    assert "Importing function sources from " + function_folder("aws_lambda_http") + "/app.py:lambda_handler" in servers["v2"].stdout
    assert "Calling it with the aws-lambda contract" in servers["v2"].stdout


def test_v2_binary_request_body_is_base64(servers):
    got = echo(requests.post(servers["v2"].url + "/", data=b"\x00\xffbin", headers={"Content-Type": "application/octet-stream"}))
    assert got["event"]["isBase64Encoded"] is True and got["body"] == b"\x00\xffbin".hex()


@pytest.mark.parametrize(
    ("path", "status", "content_type", "body"),
    [
        pytest.param("/plain", 200, "application/json", b'{"hello": "world"}', id="dict-without-statusCode-is-json"),
        pytest.param("/text", 200, "application/json", b'"just a string"', id="string-is-json-encoded-with-its-quotes"),
        pytest.param("/number", 200, "application/json", b"42", id="number-is-json"),
        pytest.param("/list", 200, "application/json", b'[1, "two", null]', id="list-is-json"),
        pytest.param("/none", 200, "application/json", b"null", id="none-is-null"),
        pytest.param("/unicode", 200, "application/json", b'{"name": "Zo\\u00eb"}', id="non-ascii-escaped-before-python312"),
        pytest.param("/decimal", 200, "application/json", b'{"price": 9.5, "count": 3}', id="decimal-is-a-number"),
        pytest.param("/set", 500, "application/json", b'{"message":"Internal Server Error"}', id="unmarshallable-is-a-function-error"),
        pytest.param("/cookies", 201, "application/json", b"set", id="content-type-defaults-to-json"),
        pytest.param("/binary", 200, "image/png", b"\x89PNG\x00\xff", id="base64-response"),
        pytest.param("/fail", 500, "application/json", b'{"message":"Internal Server Error"}', id="exception-500-as-http-api"),
    ],
)
def test_v2_responses(servers, path, status, content_type, body):
    response = requests.get(servers["v2"].url + path)
    assert (response.status_code, response.headers["Content-Type"], response.content) == (status, content_type, body)


def test_v2_non_ascii_as_the_python312_runtime_marshals_it(servers):
    response = requests.get(servers["v2-py312"].url + "/unicode")
    assert (response.headers["Content-Type"], response.content) == ("application/json", '{"name": "Zoë"}'.encode())


def test_v2_exception_is_logged_not_sent(servers):
    response = requests.get(servers["v2"].url + "/fail")
    assert b"hunter2" not in response.content
    servers["v2"].wait_for_output("hunter2")


def test_v2_cookies_become_set_cookie(servers):
    response = requests.get(servers["v2"].url + "/cookies")
    assert response.status_code == 201 and response.text == "set"
    assert response.raw.headers.getlist("Set-Cookie") == ["a=1; Path=/", "b=2"]


@pytest.mark.parametrize("payload", ["v2", "v1"])
def test_utf8_path_and_headers_arrive_as_text(servers, payload):
    # The environ holds the path's and the headers' bytes as latin-1; the gateway's event is UTF-8 JSON text.
    event = echo(requests.get(servers[payload].url + "/caf%C3%A9", headers={"X-Utf": "Zoë".encode()}))["event"]
    if payload == "v2":
        assert event["rawPath"] == event["requestContext"]["http"]["path"] == "/café"
        assert event["headers"]["x-utf"] == "Zoë"
    else:
        assert event["path"] == "/café" and event["pathParameters"] == {"proxy": "café"}
        assert event["headers"]["X-Utf"] == "Zoë" and event["multiValueHeaders"]["X-Utf"] == ["Zoë"]


@pytest.mark.parametrize(
    ("payload", "case"),
    [
        *[pytest.param("v2", case, id=f"v2-{case}") for case in (
            "bytes-body", "headers-list", "header-outside-latin1", "header-crlf", "header-name-space", "status-100", "status-600",
            "cookies-string",
        )],
        *[pytest.param("v1", case, id=f"v1-{case}") for case in (
            "bytes-body", "headers-list", "multi-headers-list", "header-outside-latin1", "header-crlf", "header-name-space",
            "status-100", "status-600",
        )],
    ],
)
def test_results_the_gateway_refuses_get_its_answer(servers, payload, case):
    """A result the runtime cannot marshal, or the gateway cannot make a response of: the gateway's own JSON answer."""
    response = requests.get(servers[payload].url + "/invalid/" + case)
    expected = (500, b'{"message":"Internal Server Error"}') if payload == "v2" else (502, b'{"message": "Internal server error"}')
    assert (response.status_code, response.content) == expected
    assert response.headers["Content-Type"] == "application/json" and "X-Injected" not in response.headers


@pytest.mark.parametrize("payload", ["v2", "v1"])
def test_header_scalars_and_is_base64_encoded_string(servers, payload):
    url = servers[payload].url
    response = requests.get(url + "/scalars")
    assert response.status_code == 200 and response.text == "s"
    assert "X-None" not in response.headers  # null: no header
    assert (response.headers["X-Five"], response.headers["X-True"]) == ("5", "true")  # as the JSON holds them
    response = requests.get(url + "/base64-string-false")
    assert (response.status_code, response.text) == (200, "aGk=")  # only a JSON true means base64


def test_context(servers):
    got = json.loads(requests.get(servers["v2"].url + "/remaining").text)
    assert 28000 < got["first"] <= 30000
    assert got["name"] == "orders" and got["memory"] == "512"
    assert got["arn"] == "arn:aws:lambda:us-east-1:123456789012:function:orders"
    assert len(got["id"]) >= 16


def test_v1_event_shape(servers):
    got = echo(requests.get(servers["v1"].url + "/a/b?x=1&x=2", headers={"X-Custom": "v"}))
    event = got["event"]
    assert event["httpMethod"] == "GET" and event["path"] == "/a/b" and event["resource"] == "/{proxy+}"
    assert event["pathParameters"] == {"proxy": "a/b"}
    assert event["queryStringParameters"] == {"x": "2"} and event["multiValueQueryStringParameters"] == {"x": ["1", "2"]}
    assert event["headers"]["X-Custom"] == "v" and event["multiValueHeaders"]["X-Custom"] == ["v"]
    assert got["body"] is None and event["isBase64Encoded"] is False


def test_v1_multi_value_headers_and_errors(servers):
    response = requests.get(servers["v1"].url + "/multi")
    assert response.raw.headers.getlist("X-Many") == ["one", "two", "three"] and response.headers["X-One"] == "1"
    failed = requests.get(servers["v1"].url + "/fail")
    assert (failed.status_code, failed.content) == (502, b'{"message": "Internal server error"}')
    malformed = requests.get(servers["v1"].url + "/bad")
    assert malformed.status_code == 502


def test_sam_template_routes_and_payload_format(servers):
    url = servers["sam"].url
    got = echo(requests.get(url + "/items/42?tag=a"))
    assert got["resource"] == "/items/{id}" and got["pathParameters"] == {"id": "42"} and got["query"] == {"tag": ["a"]}
    assert got["memory"] == "256" and 0 < got["remaining"] <= 3000  # the template's Timeout: 3
    assert echo(requests.get(url + "/hello"))["message"] == "hello world"
    missing = requests.get(url + "/nowhere")
    assert (missing.status_code, missing.json()) == (403, {"message": "Missing Authentication Token"})
    assert requests.post(url + "/hello").status_code == 403  # GET only


def test_sam_binary_media_types(servers):
    url = servers["sam"].url
    png = echo(requests.post(url + "/upload", data=b"\x89PNG\xff", headers={"Content-Type": "image/png"}))
    assert png == {"size": 5, "isBase64Encoded": True}
    text = echo(requests.post(url + "/upload", data="hi", headers={"Content-Type": "text/plain"}))
    assert text == {"size": 2, "isBase64Encoded": False}


def test_health_and_metrics_still_answered(servers):
    assert requests.get(servers["sam"].url + "/health/readiness").status_code == 200
    assert "function_calls_total" in requests.get(servers["v2"].url + "/metrics").text


@pytest.fixture(scope="module")
def powertools():
    pytest.importorskip("aws_lambda_powertools")
    root = function_folder("aws_lambda_powertools")
    with serving(
        {
            "v2": {"_HANDLER": "app.lambda_handler", "LAMBDA_TASK_ROOT": root},
            "v1": {"_HANDLER": "app.lambda_handler", "LAMBDA_TASK_ROOT": root, "LAMBDA_PAYLOAD_FORMAT": "1.0"},
        }
    ) as running:
        yield running


@pytest.mark.parametrize("payload", ["v2", "v1"])
def test_powertools_resolvers_read_the_events(powertools, payload):
    url = powertools[payload].url
    got = requests.get(url + "/todos/5?q=milk", headers={"X-Agent": "t"})
    assert (got.status_code, got.json()) == (200, {"id": "5", "q": "milk", "agent": "t"})
    created = requests.post(url + "/todos", json={"title": "x"})
    assert (created.status_code, created.json()) == (201, {"created": {"title": "x"}})
    assert requests.get(url + "/nowhere").status_code == 404  # Powertools' own not-found answer


def test_powertools_sees_v2_cookies(powertools):
    got = requests.get(powertools["v2"].url + "/cookies", headers={"Cookie": "a=1; b=2"})
    assert got.json() == {"cookies": ["a=1", "b=2"]}
