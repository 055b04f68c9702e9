"""Kubeless functions, deployed as Kubeless deploys them: MOD_NAME/FUNC_HANDLER, FUNC_PORT, a mounted folder."""

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
            # The custom-runtime example: only the handler string and the volume.
            "custom": {"FUNC_HANDLER": "foo.foo", "KUBELESS_INSTALL_VOLUME": function_folder("kubeless_custom")},
            "echo": {"MOD_NAME": "hello", "FUNC_HANDLER": "handler", "FUNCTION_PATH": function_folder("kubeless_echo")},
            "metadata": {
                "MOD_NAME": "hello", "FUNC_HANDLER": "metadata", "FUNCTION_PATH": function_folder("kubeless_echo"),
                "FUNC_TIMEOUT": "30", "FUNC_RUNTIME": "python3.7", "FUNC_MEMORY_LIMIT": "128Mi", "FUNC_NAME": "get-python",
            },
            "raw-body": {"MOD_NAME": "hello", "FUNC_HANDLER": "raw_body", "FUNCTION_PATH": function_folder("kubeless_echo")},
            "utf": {"MOD_NAME": "hello", "FUNC_HANDLER": "utf", "FUNCTION_PATH": function_folder("kubeless_echo")},
            "bottle": {"FUNCTION_PATH": function_folder("kubeless_bottle"), "MOD_NAME": "handler", "FUNC_HANDLER": "main"},
            "request": {"MOD_NAME": "request", "FUNC_HANDLER": "handler", "FUNCTION_PATH": function_folder("kubeless_examples")},
            "helloget": {"MOD_NAME": "helloget", "FUNC_HANDLER": "foo", "FUNCTION_PATH": function_folder("kubeless_examples")},
            "hellowithdata": {"MOD_NAME": "helloget", "FUNC_HANDLER": "handler", "FUNCTION_PATH": function_folder("kubeless_examples")},
        }
    ) as running:
        yield running


def test_custom_runtime_handler_string(servers):
    server = servers["custom"]
    response = requests.get(server.url + "/")
    assert (response.status_code, response.text) == (200, "hello world")
    # Kubeless served str as text/html; funcwsgi serves text/plain (see docs/migration-kubeless.md).
    assert response.headers["Content-Type"] == "text/plain; charset=utf-8"
    assert f"Importing function sources from {function_folder('kubeless_custom')}/foo.py:foo" in server.stdout


def test_echo_json_is_decoded_and_reencoded(servers):
    response = requests.post(servers["echo"].url + "/", json={"hello": "world"})
    assert response.json() == {"hello": "world"}
    assert response.headers["Content-Type"] == "application/json"


def test_echo_text_is_the_raw_body(servers):
    response = requests.post(servers["echo"].url + "/", data="some data", headers={"Content-Type": "text/plain"})
    assert response.content == b"some data"


def test_echo_prints_the_event(servers):
    requests.post(servers["echo"].url + "/", json={"printed": 1})
    servers["echo"].wait_for_output("'printed': 1")


def test_event_metadata_and_context(servers):
    response = requests.get(
        servers["metadata"].url + "/?name=a&name=b",
        headers={
            "event-id": "2ebb072eb24264f55b3fff", "event-type": "application/json",
            "event-time": "2009-11-10 23:00:00 +0000 UTC", "event-namespace": "kafkatriggers.kubeless.io",
            "User-Agent": "kubeless-test",
        },
    )
    body = json.loads(response.text)
    assert body["event-id"] == "2ebb072eb24264f55b3fff"
    assert body["event-type"] == "application/json"
    assert body["event-time"] == "2009-11-10 23:00:00 +0000 UTC"
    assert body["event-namespace"] == "kafkatriggers.kubeless.io"
    assert body["function-name"] == "get-python"
    assert body["timeout"] == 30.0
    assert body["runtime"] == "python3.7"
    assert body["memory-limit"] == "128Mi"
    assert body["method"] == "GET"
    assert body["user-agent"] == "kubeless-test"
    # bottle's FormsDict: an attribute is the most recent value.
    assert (body["name"], body["names"], body["missing"]) == ("b", ["a", "b"], "")
    assert "event-id" in body["header-names"]


def test_event_keys_are_none_without_headers(servers):
    body = json.loads(requests.get(servers["metadata"].url + "/").text)
    assert body["event-id"] is None and body["event-namespace"] is None


def test_body_reads_like_bottles_file(servers):
    response = requests.post(servers["raw-body"].url + "/", json={"k": "v"})
    assert response.json() == {"first": '{"k', "rest": '": "v"}', "again": '{"k": "v"}', "json": {"k": "v"}, "data_type": "dict"}
    response = requests.post(servers["raw-body"].url + "/", data=b"abcdef", headers={"Content-Type": "application/octet-stream"})
    assert response.json() == {"first": "abc", "rest": "def", "again": "abcdef", "json": None, "data_type": "bytes"}


@pytest.mark.parametrize(
    ("path", "status", "body", "headers"),
    [
        pytest.param("/orders/1", 200, '{"id": 1, "item": "book"}', {"Content-Type": "application/json"}, id="dict-json"),
        pytest.param("/orders/9", 404, "no such order", {"Content-Type": "text/plain; charset=utf-8"}, id="abort"),
        pytest.param("/created", 201, '{"created": "x"}', {"Location": "/orders/2"}, id="response-status"),
        pytest.param("/typed", 200, "a,b\n1,2\n", {"Content-Type": "text/csv"}, id="response-content-type"),
        pytest.param("/response", 202, "accepted", {"X-Queue": "orders"}, id="return-httpresponse"),
        pytest.param("/raise-response", 302, "moved", {"Location": "/elsewhere"}, id="raise-httpresponse"),
        pytest.param("/fail", 503, "try again later", {}, id="httperror"),
        pytest.param("/body", 200, '{"bottle": "x", "event": "x"}', {}, id="body-read-twice"),
        pytest.param("/", 200, "plain", {}, id="str"),
    ],
)
def test_bottle_globals_and_responses(servers, path, status, body, headers):
    response = requests.post(
        servers["bottle"].url + path, data="x", headers={"Content-Type": "text/plain"}, allow_redirects=False
    )
    assert response.status_code == status
    assert response.text == body
    for name, value in headers.items():
        assert response.headers[name] == value


def test_utf8_path_and_headers_as_bottle_decoded_them(servers):
    # A WSGI server hands PATH_INFO and header values over as latin-1; bottle re-read them as UTF-8.
    got = requests.get(servers["utf"].url + "/caf%C3%A9", headers={"X-Utf": "Zoë".encode()}).json()
    assert got == {"path": "/café", "url": servers["utf"].url + "/caf%C3%A9", "header": "Zoë", "headers": "Zoë"}
    # Functions that import bottle see bottle.request as bottle's app left it.
    got = requests.get(servers["bottle"].url + "/utf/caf%C3%A9", headers={"X-Utf": "Zoë".encode()}).json()
    assert got == {"path": "/utf/café", "header": "Zoë"}


def test_bottle_state_does_not_leak_between_calls(servers):
    assert requests.post(servers["bottle"].url + "/created", data="x").status_code == 201
    response = requests.get(servers["bottle"].url + "/")
    assert response.status_code == 200 and "Location" not in response.headers


def test_invalid_json_is_400_and_empty_json_is_none(servers):
    response = requests.post(servers["echo"].url + "/", data="{nope", headers={"Content-Type": "application/json"})
    assert (response.status_code, response.text) == (400, "Bad Request: The request body is not valid JSON.")
    response = requests.post(servers["raw-body"].url + "/", data=b"", headers={"Content-Type": "application/json"})
    assert response.json()["data_type"] == "NoneType"


def test_request_example_saves_the_upload_the_bottle_way(servers):
    # Kubeless's examples/request.py, called as its comment says, with a file to upload.
    import shutil
    import uuid
    from pathlib import Path

    category = f"funcwsgi-test-{uuid.uuid4().hex}"
    try:
        response = requests.post(
            servers["request"].url + "/?greeting=Hola",
            headers={"Say-Hello-To": "John"},
            data={"category": category},
            files={"upload": ("../My Report (final).pdf", b"%PDF-1.4 bytes", "application/pdf")},
        )
        assert (response.status_code, response.text) == (200, "Hola John")
        # bottle's FileUpload.filename: no folders, no spaces or brackets.
        assert (Path("/tmp") / category / "My-Report-final.pdf").read_bytes() == b"%PDF-1.4 bytes"
        # Sent again: overwrite=True replaces the file instead of failing.
        requests.post(
            servers["request"].url + "/", data={"category": category},
            files={"upload": ("../My Report (final).pdf", b"second", "application/pdf")},
        )
        assert (Path("/tmp") / category / "My-Report-final.pdf").read_bytes() == b"second"
    finally:
        shutil.rmtree(Path("/tmp") / category, ignore_errors=True)


def test_helloget_and_hellowithdata_examples(servers):
    assert requests.get(servers["helloget"].url + "/").text == "hello world"
    assert requests.post(servers["hellowithdata"].url + "/", json={"k": [1]}).json() == {"k": [1]}
