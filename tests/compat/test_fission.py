"""Fission's python environment protocol: start empty, specialise, then serve main() with flask.request."""

from __future__ import annotations

import json
import shutil

import pytest
import requests

from ..support.paths import function_folder
from ..support.ports import free_port
from ..support.processes import GUNICORN, Server, base_env


def start(volume: str, **settings: str) -> Server:
    port = free_port()
    # What a Fission environment container gets: the volume, and its port set by the pod spec.
    env = base_env(SERVER_HOST="127.0.0.1", USERFUNCVOL=volume, RUNTIME_PORT=str(port), SERVER_NUMTHREADS="4", **settings)
    server = Server(GUNICORN, env, port)
    server.wait_ready()
    return server


@pytest.fixture(scope="module")
def volume(tmp_path_factory):
    path = tmp_path_factory.mktemp("userfunc")
    shutil.copy(function_folder("fission_hello") + "/hello.py", path / "user")  # /specialize loads /userfunc/user
    return path


@pytest.fixture(scope="module")
def servers(volume):
    started = {name: start(str(volume)) for name in ("v1", "file", "package")}
    started["timed"] = start(str(volume), SERVER_CALL_TIMEOUT="1", SERVER_MAX_BODY_SIZE="1000")
    started["chunked"] = start(str(volume))
    try:
        yield started
    finally:
        for server in started.values():
            server.stop()


def test_calls_before_specialising_are_500(servers):
    response = requests.get(servers["v1"].url + "/")
    assert response.status_code == 500 and response.text == "Internal Server Error"


def test_v1_specialize_loads_userfunc_user(servers):
    server = servers["v1"]
    assert requests.post(server.url + "/specialize").status_code == 200
    assert requests.get(server.url + "/").text == "Hello, world!\n"
    assert requests.get(server.url + "/healthz").status_code == 200


def test_v2_specialize_single_file_and_router_params(servers):
    server = servers["file"]
    spec = {"filepath": function_folder("fission_hello") + "/hello.py", "functionName": "params"}
    assert requests.post(server.url + "/v2/specialize", json=spec).status_code == 200
    got = requests.put(server.url + "/users/7", data="x", headers={"X-Fission-Params-Id": "7"}).json()
    assert got == {"id": "7", "body": "x", "method": "PUT"}


def test_v2_specialize_package(servers):
    server = servers["package"]
    spec = {"filepath": function_folder("fission_package"), "functionName": "users.main"}
    assert requests.post(server.url + "/v2/specialize", json=spec).status_code == 200
    response = requests.post(server.url + "/?name=ada")
    assert (response.status_code, response.text) == (201, "ada")


def test_specialising_is_no_call_and_outlasts_the_call_timeout(servers):
    server = servers["timed"]
    spec = {"filepath": function_folder("fission_slow_import") + "/slow.py", "functionName": "main"}
    specialised = requests.post(server.url + "/v2/specialize", json=spec)
    assert (specialised.status_code, specialised.text) == (200, "")
    assert requests.get(server.url + "/").text == "loaded slowly\n"
    # The function's calls are counted, and timed; the specialise call was neither.
    metrics = requests.get(server.url + "/metrics").text
    assert 'function_calls_total{method="GET"} 1.0' in metrics and 'function_calls_total{method="POST"} 0.0' in metrics
    timed_out = requests.get(server.url + "/?sleep=3")
    assert (timed_out.status_code, timed_out.text) == (408, "Timeout while processing the function")


def test_a_specialise_body_past_the_body_limit_is_refused(servers):
    too_large = (413, "Request Entity Too Large: the request body is larger than 1000 bytes")
    response = requests.post(servers["timed"].url + "/v2/specialize", data=b"{" + b" " * 1000 + b"}")
    assert (response.status_code, response.text) == too_large
    chunked = requests.post(servers["timed"].url + "/v2/specialize", data=iter([b"{", b" " * 1000, b"}"]))
    assert (chunked.status_code, chunked.text) == too_large


def test_a_chunked_specialise_body_is_read(servers):
    spec = json.dumps({"filepath": function_folder("fission_hello") + "/hello.py", "functionName": "main"}).encode()
    server = servers["chunked"]
    assert requests.post(server.url + "/v2/specialize", data=iter([spec[:10], spec[10:]])).status_code == 200
    assert requests.get(server.url + "/").text == "Hello, world!\n"


def test_bad_specialize_requests(volume):
    server = start(str(volume))
    try:
        assert requests.post(server.url + "/v2/specialize", data="nope").status_code == 400
        missing = requests.post(server.url + "/v2/specialize", json={"filepath": "/nowhere", "functionName": "main"})
        assert missing.status_code == 500
        server.wait_for_output("filepath '/nowhere' does not exist")
        spec = {"filepath": function_folder("fission_hello") + "/hello.py", "functionName": "fail"}
        assert requests.post(server.url + "/v2/specialize", json=spec).status_code == 200
        failed = requests.get(server.url + "/")
        assert (failed.status_code, failed.text) == (500, "Internal Server Error")
        server.wait_for_output("fission secret 99")
    finally:
        server.stop()


def test_several_workers_are_refused(volume):
    from ..support.processes import run_to_exit

    env = base_env(USERFUNCVOL=str(volume), SERVER_WORKERS="2", SERVER_PORT=str(free_port()))
    result = run_to_exit(GUNICORN, env)
    assert result.returncode != 0
    assert "SERVER_WORKERS=2 is refused for a Fission environment" in result.stdout + result.stderr
