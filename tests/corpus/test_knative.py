"""Knative func-python functions, in the layout `func create -l python` writes, served unchanged."""

from __future__ import annotations

import time

import pytest
import requests

from . import folder, serving


@pytest.fixture(scope="module")
def servers():
    with serving(
        {
            # func.yaml with the python runtime beside function/func.py.
            "instance": {"HANDLER_FOLDER": folder("knative_instance"), "GREETING": "hi"},
            # What func-python's own server reads: LISTEN_ADDRESS.
            "handle": {"HANDLER_FOLDER": folder("knative_handle"), "LISTEN_ADDRESS": "127.0.0.1:8080"},
        }
    ) as running:
        yield running


def test_instance_handle_sees_the_asgi_scope(servers):
    response = requests.post(servers["instance"].url + "/a/b?x=1", data="payload", headers={"X-Custom": "v"})
    assert response.status_code == 200 and response.headers["Content-Type"] == "application/json"
    got = response.json()
    assert (got["method"], got["path"], got["query"], got["body"]) == ("POST", "/a/b", "x=1", "payload")
    assert got["headers"]["x-custom"] == "v"
    assert got["started"] == "hi"  # start(cfg) got the environment
    assert "Calling it with the knative contract" in servers["instance"].stdout


def test_probes_ask_the_instance(servers):
    url = servers["instance"].url
    assert requests.get(url + "/health/readiness").status_code == 200
    assert requests.get(url + "/health/liveness").status_code == 200
    requests.get(url + "/sick")
    sick = requests.get(url + "/health/liveness")
    assert (sick.status_code, sick.text) == (503, "sick")


def test_failure_is_plain_500(servers):
    response = requests.get(servers["instance"].url + "/fail")
    assert (response.status_code, response.text) == (500, "Internal Server Error")
    servers["instance"].wait_for_output("internal detail 42")


def test_module_level_handle_streams(servers):
    started = time.monotonic()
    with requests.get(servers["handle"].url + "/", stream=True) as response:
        assert response.status_code == 200
        chunks = response.iter_lines()
        first = next(chunks)
        first_at = time.monotonic() - started
        rest = list(chunks)
    assert first == b"chunk 0" and rest == [b"chunk 1", b"chunk 2", b"done"]
    assert first_at < 0.5  # the first chunk arrived before the handler finished (0.6 s)


def test_same_answers_as_func_pythons_own_server(servers):
    """The instance served by func-python itself (hypercorn) and by funcwsgi answer a call alike."""
    pytest.importorskip("func_python")
    import sys

    from ..servers import Server, base_env, free_port

    port = free_port()
    launcher = "import sys; sys.path.insert(0, sys.argv[1]); from function import new; from func_python.http import serve; serve(new)"
    env = base_env(LISTEN_ADDRESS=f"127.0.0.1:{port}", GREETING="hi")
    own = Server([sys.executable, "-c", launcher, folder("knative_instance")], env, port)
    try:
        own.wait_ready("/health/readiness")
        for method, path in (("POST", "/a/b?x=1"), ("GET", "/")):
            theirs = requests.request(method, own.url + path, data="payload", headers={"X-Custom": "v"})
            ours = requests.request(method, servers["instance"].url + path, data="payload", headers={"X-Custom": "v"})
            assert ours.status_code == theirs.status_code == 200
            assert ours.headers["Content-Type"] == theirs.headers["Content-Type"]
            strip = ("headers", "calls")
            assert {k: v for k, v in ours.json().items() if k not in strip} == {k: v for k, v in theirs.json().items() if k not in strip}
            assert ours.json()["headers"]["x-custom"] == theirs.json()["headers"]["x-custom"] == "v"
    finally:
        own.stop()


@pytest.fixture(scope="module")
def events():
    pytest.importorskip("cloudevents.core")
    with serving({"events": {"HANDLER_FOLDER": folder("knative_cloudevent")}}) as running:
        yield running["events"]


BINARY = {"ce-specversion": "1.0", "ce-id": "e-1", "ce-source": "/test", "ce-type": "order.created", "Content-Type": "application/json"}


def test_cloudevent_function_gets_the_event_and_answers_structured(events):
    response = requests.post(events.url + "/", json={"n": 1}, headers=BINARY)
    assert response.status_code == 200
    assert response.headers["Content-Type"].startswith("application/cloudevents+json")
    body = response.json()
    assert (body["type"], body["source"], body["data"]) == ("reply.structured", "/fn", {"echo": {"n": 1}, "id": "e-1"})


def test_cloudevent_function_binary_reply(events):
    response = requests.post(events.url + "/", json={"n": 2}, headers={**BINARY, "ce-type": "binary.please"})
    assert response.status_code == 202 and response.headers["ce-type"] == "reply.binary"
    assert response.json() == {"got": {"n": 2}}


def test_cloudevent_function_refuses_a_plain_request(events):
    response = requests.post(events.url + "/", data="not an event")
    assert response.status_code == 400
