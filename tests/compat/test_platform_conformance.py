"""The conformance fixture's core paths written in each platform's style, and the runtime's own features around them.

Every platform's function answers the same requests alike, and gets the same
call timeout, body limit, metrics and failure handling as a funcwsgi function.
"""

from __future__ import annotations

import pytest
import requests

from ..support.paths import function_folder

# The core paths' checks, shared with the other language's platforms: collected here, against this module's ``url``.
from ..support.platform_checks import *  # noqa: F403
from . import serving

pytest.importorskip("azure.functions")

SECRET = "conformance-secret-7f3a"
LIMITS = {"SERVER_CALL_TIMEOUT": "1", "SERVER_MAX_BODY_SIZE": "1000"}
PLATFORMS = {
    "aws-lambda": {"_HANDLER": "app.lambda_handler", "LAMBDA_TASK_ROOT": function_folder("conformance_lambda")},
    "azure": {"HANDLER_FOLDER": function_folder("conformance_azure")},
    "openfaas": {"HANDLER_FOLDER": function_folder("conformance_openfaas"), "fprocess": "python index.py", "mode": "http"},
    "fission": {"USERFUNCVOL": function_folder("conformance_fission")},
    "knative": {"HANDLER_FOLDER": function_folder("conformance_knative")},
}


@pytest.fixture(scope="module")
def servers():
    with serving({name: {**settings, **LIMITS} for name, settings in PLATFORMS.items()}) as running:
        spec = {"filepath": function_folder("conformance_fission") + "/fixture.py", "functionName": "main"}
        assert requests.post(running["fission"].url + "/v2/specialize", json=spec).status_code == 200
        yield running


@pytest.fixture(params=sorted(PLATFORMS))
def url(request, servers):
    return servers[request.param].url


@pytest.fixture(params=sorted(PLATFORMS))
def platform(request, servers):
    return request.param, servers[request.param]


def test_failure_never_leaks(platform):
    name, server = platform
    response = requests.get(server.url + "/raise")
    assert response.status_code == 500 and SECRET not in response.text
    expected = '{"message":"Internal Server Error"}' if name == "aws-lambda" else "Internal Server Error"
    assert response.text == expected
    server.wait_for_output(SECRET)
