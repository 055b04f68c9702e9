"""The conformance fixture's core paths written in each platform's Node.js style, served by nodejs26.

The Node column of tests/compat/test_platform_conformance.py: every platform's
function answers the same requests alike, with its platform's library installed
in its node_modules and without it, and gets the same call timeout, body limit,
metrics and failure handling as a nodejs26 function.
"""

from __future__ import annotations

import json
import re
import socket

import pytest
import requests

from ..compat import serving
from ..support.paths import REPO

# The core paths' checks, shared with the other language's platforms: collected here, against this module's ``url``.
from ..support.platform_checks import *  # noqa: F403
from .platform_libraries import deployed

SERVE = [str(REPO / "nodejs26" / "bin" / "serve")]
SECRET = "conformance-secret-7f3a"
LIMITS = {"SERVER_CALL_TIMEOUT": "1", "SERVER_MAX_BODY_SIZE": "1000"}
#: platform -> (fixture, the settings its host would set, given the deployed folder).
PLATFORMS = {
    "aws-lambda": ("conformance_lambda_nodejs26", lambda folder: {"_HANDLER": "index.handler", "LAMBDA_TASK_ROOT": folder, "AWS_LAMBDA_FUNCTION_NAME": "conformance"}),
    "azure": ("conformance_azure_nodejs26", lambda folder: {"FUNCTIONS_WORKER_RUNTIME": "node", "AzureWebJobsScriptRoot": folder}),
    "fission": ("conformance_fission_nodejs26", lambda folder: {"USERFUNCVOL": folder}),
    "functions-framework": ("conformance_functions_framework_nodejs26", lambda folder: {"HANDLER_FOLDER": folder, "FUNCTION_TARGET": "fixture"}),
}
#: What a throw answers, as each platform's front answers it.
FAILURE_BODY = {"aws-lambda": '{"message":"Internal Server Error"}', "azure": "", "fission": "Internal server error", "functions-framework": "Internal Server Error"}
#: Platforms whose own library a function installs: launched with it in node_modules and without.
WITH_LIBRARIES = {"azure", "functions-framework"}
LAUNCHES = [
    (platform, library)
    for platform in sorted(PLATFORMS)
    for library in (("with-library", "without-library") if platform in WITH_LIBRARIES else ("no-library",))
]
#: The specialise call a platform needs before its first call: (path, body given the deployed folder).
SPECIALISE = {"fission": ("/v2/specialize", lambda folder: {"filepath": f"{folder}/fixture.js", "functionName": ""})}
#: Platforms whose fixtures also answer /log and /cancel (JSON logs, cancellation).
LOGGING_FIXTURES = {"aws-lambda", "fission"}


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    settings = {}
    folders = {}
    for platform, library in LAUNCHES:
        fixture, environ = PLATFORMS[platform]
        folder = deployed(fixture, tmp_path_factory.mktemp(platform) / fixture, with_library=library == "with-library")
        folders[(platform, library)] = str(folder)
        settings[(platform, library)] = {**environ(str(folder)), **LIMITS}
    with serving(settings, SERVE) as running:
        for (platform, library), server in running.items():
            if platform in SPECIALISE:
                path, spec = SPECIALISE[platform]
                assert requests.post(server.url + path, json=spec(folders[(platform, library)]), timeout=10).status_code == 202
        yield running


@pytest.fixture(params=LAUNCHES, ids=["/".join(launch) for launch in LAUNCHES])
def launch(request, servers):
    platform, library = request.param
    return platform, library, servers[request.param]


@pytest.fixture
def url(launch):
    return launch[2].url


#: The start-up line naming what registered the function: the platform's library from node_modules, or the runtime's stand-in.
REGISTERED = {
    ("azure", "with-library"): r"Azure Functions app: .*registered through @azure/functions 4\.16\.5\b(?! \(nodejs26's stand-in\))",
    ("azure", "without-library"): r"Azure Functions app: .*registered through @azure/functions 4\.16\.5 \(nodejs26's stand-in\)",
    ("functions-framework", "with-library"): r"'fixture': registered with @google-cloud/functions-framework \(/[^)]*node_modules/@google-cloud/functions-framework\)",
    ("functions-framework", "without-library"): r"'fixture': registered with @google-cloud/functions-framework \(nodejs26's stand-in\)",
}


def test_the_library_that_registered_the_function(launch):
    platform, library, server = launch
    if (platform, library) not in REGISTERED:
        pytest.skip(f"{platform} has no library of its own")
    assert re.search(REGISTERED[(platform, library)], server.stdout), server.stdout


def test_failure_never_leaks(launch):
    platform, _, server = launch
    response = requests.get(server.url + "/raise")
    assert (response.status_code, response.text) == (500, FAILURE_BODY[platform])
    server.wait_for_output(SECRET)


def test_probes(url):
    for path in ("/healthz", "/health/readiness", "/health/liveness"):
        assert requests.get(url + path).status_code == 200, path


LOGGING_LAUNCHES = [launch for launch in LAUNCHES if launch[0] in LOGGING_FIXTURES]


@pytest.fixture(params=LOGGING_LAUNCHES, ids=["/".join(launch) for launch in LOGGING_LAUNCHES])
def logging_launch(request, servers):
    return request.param[0], servers[request.param]


def test_json_logs_carry_the_request_id(logging_launch):
    name, server = logging_launch
    request_id = f"conformance-{name}"
    assert requests.get(server.url + "/log", headers={"X-Request-Id": request_id}).status_code == 200
    server.wait_for_output("logged by")
    records = [json.loads(text) for text in server.stdout.splitlines() if text.startswith("{") and "logged by" in text]
    assert records and all(record["request_id"] == request_id for record in records), server.stdout


def test_cancellation_reaches_the_function(logging_launch):
    _, server = logging_launch
    port = int(server.url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as client:
        client.sendall(b"GET /cancel HTTP/1.1\r\nHost: conformance\r\n\r\n")
        server.wait_for_output("waiting for cancellation")  # the function runs: now the client leaves
    server.wait_for_output("cancelled: true")
