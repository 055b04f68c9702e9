from __future__ import annotations

import pytest
import requests
from werkzeug.test import Client

from funcwsgi import make_app
from funcwsgi.kafka.consumer import TriggerStatus
from funcwsgi.kafka.probes import ProbeApp, start_probe_server
from tests.support.paths import function_folder
from tests.support.ports import free_port


@pytest.fixture
def probes(monkeypatch, tmp_path):
    monkeypatch.setenv("HEALTH_DIR", str(tmp_path))  # the serving function's ready()/alive() look there
    status = TriggerStatus("kafka-0:9092", ("orders",))
    status.running = True
    status.connected = True
    app = make_app(environ={}, handler_folder=function_folder("serving"))
    return Client(ProbeApp(app, status, "/metrics")), status, tmp_path


def test_ready_and_alive_while_connected_and_running(probes):
    client, _, _ = probes
    for path in ("/healthz", "/health/liveness", "/health/readiness"):
        response = client.get(path)
        assert (response.status_code, response.text) == (200, "OK"), path


@pytest.mark.parametrize("connected", [None, False], ids=["not yet connected", "connection lost"])
def test_not_ready_without_a_broker_but_still_alive(probes, connected):
    client, status, _ = probes
    status.connected = connected
    response = client.get("/health/readiness")
    assert (response.status_code, response.text) == (503, "Kafka brokers unreachable")
    assert client.get("/healthz").status_code == 200


def test_a_stopped_consumer_is_not_alive(probes):
    client, status, _ = probes
    status.running = False
    for path in ("/healthz", "/health/liveness", "/health/readiness"):
        assert client.get(path).status_code == 503, path
    assert client.get("/healthz").text == "Kafka consumer stopped"


def test_the_function_hooks_still_decide(probes):
    client, _, folder = probes
    (folder / "not-ready").touch()
    (folder / "not-alive").touch()
    response = client.get("/health/readiness")
    assert (response.status_code, response.text) == (503, "warming up the cache")
    assert client.get("/health/liveness").status_code == 503


def test_metrics_are_served(probes):
    client, _, _ = probes
    response = client.get("/metrics")
    assert response.status_code == 200
    assert "function_calls_total" in response.text


@pytest.mark.parametrize(("method", "path"), [("POST", "/"), ("GET", "/"), ("GET", "/favicon.ico"), ("POST", "/health/readiness")])
def test_the_function_is_not_reachable_over_http(probes, method, path):
    client, _, _ = probes
    response = client.open(path, method=method)
    assert response.status_code == 404
    assert "served from Kafka" in response.text


def test_without_metrics_on_this_port_the_path_is_not_forwarded(monkeypatch, tmp_path):
    # SERVER_METRICS_PORT or SERVER_METRICS=false: /metrics must not reach the function.
    status = TriggerStatus("kafka-0:9092", ("orders",))
    status.running = status.connected = True
    called = []
    app = make_app(lambda req: called.append(req.path) or "function", environ={}, server_metrics=False)
    client = Client(ProbeApp(app, status, None))
    assert client.get("/metrics").status_code == 404
    assert client.get("/health/readiness").status_code == 200
    assert called == []


@pytest.mark.parametrize("function", ["hello", "serving"], ids=["without hooks", "with ready and alive hooks"])
def test_every_probe_answer_of_the_probe_server_is_never_cached(monkeypatch, tmp_path, function):
    """Over HTTP, on the kafka adapter's own probe server: consumer up, broker lost, consumer stopped.

    Mutation caught: the consumer's 503s made as plain ``Reply`` objects, without ``Cache-Control: no-store``.
    """
    monkeypatch.setenv("HEALTH_DIR", str(tmp_path))
    status = TriggerStatus("kafka-0:9092", ("orders",))
    status.running = status.connected = True
    app = make_app(environ={}, handler_folder=function_folder(function), server_call_timeout=0)
    port = free_port()
    server = start_probe_server(ProbeApp(app, status, "/metrics"), "127.0.0.1", port)
    seen = []
    try:
        for state in ("serving", "broker lost", "stopped"):
            status.connected = state == "serving"
            status.running = state != "stopped"
            for method in ("GET", "HEAD"):
                for path in ("/healthz", "/health/readiness", "/health/liveness"):
                    response = requests.request(method, f"http://127.0.0.1:{port}{path}", timeout=10)
                    seen.append((state, method, path, response.status_code, response.headers.get("Cache-Control")))
    finally:
        server.shutdown()
        server.server_close()
    assert {answer[3] for answer in seen} == {200, 503}
    assert [answer for answer in seen if answer[4] != "no-store"] == []
