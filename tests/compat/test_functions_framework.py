"""Google Cloud Functions HTTP functions: ``main.py``, the target named by FUNCTION_TARGET or HANDLER_FUNCTION_NAME."""

from __future__ import annotations

import pytest
import requests

from ..support.paths import function_folder
from . import serving

GCF = function_folder("gcf_http")


@pytest.fixture(scope="module")
def servers():
    with serving(
        {
            # Only the folder and the target: main.py is found because there is no handler.py.
            "hello": {"HANDLER_FOLDER": GCF, "FUNCTION_TARGET": "hello_http"},
            "method": {"HANDLER_FOLDER": GCF, "HANDLER_FUNCTION_NAME": "hello_method"},
            "content": {"HANDLER_FOLDER": GCF, "HANDLER_MODULE_NAME": "main", "HANDLER_FUNCTION_NAME": "hello_content"},
            "cors": {"HANDLER_FOLDER": GCF, "FUNCTION_TARGET": "cors_enabled"},
            "flask-request": {"HANDLER_FOLDER": GCF, "FUNCTION_TARGET": "json_api"},
        }
    ) as running:
        yield running


def test_main_py_and_target_are_found(servers):
    assert f"Importing function sources from {GCF}/main.py:hello_http" in servers["hello"].stdout


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        pytest.param({"json": {"name": "Ada"}}, "Hello Ada!", id="json"),
        pytest.param({"params": {"name": "Bob"}}, "Hello Bob!", id="args"),
        pytest.param({"data": "not json", "headers": {"Content-Type": "application/json"}}, "Hello World!", id="bad-json-is-silent"),
        pytest.param({"json": {"name": "<script>"}}, "Hello &lt;script&gt;!", id="escaped"),
        pytest.param({}, "Hello World!", id="nothing"),
    ],
)
def test_hello_http(servers, kwargs, expected):
    response = requests.post(servers["hello"].url + "/", **kwargs)
    assert (response.status_code, response.text) == (200, expected)


def test_hello_method(servers):
    assert requests.get(servers["method"].url + "/").text == "Hello World!"
    assert requests.put(servers["method"].url + "/").status_code == 405


@pytest.mark.parametrize(
    ("content_type", "data", "expected"),
    [
        pytest.param("application/json", b'{"name": "Json"}', "Hello Json!", id="json"),
        pytest.param("application/octet-stream", b"Bytes", "Hello Bytes!", id="octet-stream"),
        pytest.param("text/plain", b"Text", "Hello Text!", id="text"),
        pytest.param("application/x-www-form-urlencoded", b"name=Form", "Hello Form!", id="form"),
    ],
)
def test_hello_content(servers, content_type, data, expected):
    response = requests.post(servers["content"].url + "/", data=data, headers={"Content-Type": content_type})
    assert (response.status_code, response.text) == (200, expected)


def test_hello_content_unknown_type_is_a_500(servers):
    response = requests.post(servers["content"].url + "/", data=b"x", headers={"Content-Type": "image/png"})
    assert (response.status_code, response.text) == (500, "Internal Server Error")


def test_cors_preflight_and_call(servers):
    preflight = requests.options(servers["cors"].url + "/")
    assert preflight.status_code == 204
    assert preflight.headers["Access-Control-Allow-Methods"] == "GET"
    assert preflight.headers["Access-Control-Max-Age"] == "3600"
    response = requests.get(servers["cors"].url + "/")
    assert response.text == "Hello World!" and response.headers["Access-Control-Allow-Origin"] == "*"


def test_the_request_is_flasks(servers):
    assert requests.get(servers["flask-request"].url + "/").json() == {"is_flask_request": True, "same": True}
