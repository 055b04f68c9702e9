"""Kyma python314 functions: ``def main():`` reading the request through Flask."""

from __future__ import annotations

import pytest
import requests

from ..support.paths import function_folder
from . import serving


@pytest.fixture(scope="module")
def servers():
    with serving({"flask": {"HANDLER_PATH": function_folder("kyma314_flask"), "HANDLER_MOD_NAME": "handler", "HANDLER_FUNC_NAME": "main"}}) as running:
        yield running


@pytest.mark.parametrize(
    ("method", "path", "kwargs", "status", "expected", "headers"),
    [
        pytest.param("POST", "/json", {"json": {"name": "Kyma"}}, 200, {"greeting": "Hello Kyma", "method": "POST"}, {}, id="jsonify"),
        pytest.param("GET", "/json", {}, 200, {"greeting": "Hello world", "method": "GET"}, {}, id="jsonify-no-body"),
        pytest.param("GET", "/created", {}, 201, {"id": 7}, {}, id="response-and-status"),
        pytest.param("GET", "/tuple?q=x", {}, 202, {"query": "x"}, {"X-Kyma": "python314"}, id="dict-status-headers"),
        pytest.param("GET", "/empty", {}, 204, b"", {}, id="empty-204"),
        pytest.param("GET", "/made", {}, 200, b"made", {"X-Made": "yes"}, id="make-response"),
        pytest.param("GET", "/forbidden", {}, 403, None, {}, id="abort"),
        pytest.param("POST", "/form", {"data": {"a": "1"}}, 200, {"form": {"a": "1"}}, {}, id="form"),
        pytest.param("POST", "/echo", {"data": b"raw"}, 200, b"raw", {}, id="get-data"),
    ],
)
def test_flask_request_and_returns(servers, method, path, kwargs, status, expected, headers):
    response = requests.request(method, servers["flask"].url + path, **kwargs)
    assert response.status_code == status
    if isinstance(expected, dict):
        assert response.json() == expected
    elif expected is not None:
        assert response.content == expected
    for name, value in headers.items():
        assert response.headers[name] == value
