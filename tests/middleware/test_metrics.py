"""Prometheus metrics: counted in-process, valid for promtool, scraped by a real Prometheus."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
import requests
from prometheus_client.parser import text_string_to_metric_families

from ..support.logs import log_records
from ..support.paths import function_folder
from ..support.ports import free_port
from ..support.processes import GUNICORN, Server, base_env, debian_tool, start
from ..support.wsgi import StartResponse


def samples(text: str) -> dict[tuple[str, str], float]:
    """{(sample name, method label): value} of the function_* series."""
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name.startswith("function_") and "le" not in sample.labels:
                found[(sample.name, sample.labels.get("method", ""))] = sample.value
    return found


@pytest.fixture(scope="module")
def client():
    from werkzeug.test import Client

    from funcwsgi import make_app

    return Client(make_app(environ={}, handler_folder=function_folder("observed")))


def test_calls_failures_and_durations_are_counted(client):
    before = samples(client.get("/metrics").text)
    for path in ("/", "/fail", "/unavailable", "/marked-failure", "/stream"):
        client.get(path, buffered=True)
    client.post("/")
    client.get("/healthz")  # reserved routes are not counted
    client.get("/metrics")
    after = samples(client.get("/metrics").text)

    def delta(name: str, method: str) -> float:
        return after.get((name, method), 0) - before.get((name, method), 0)

    assert delta("function_calls_total", "GET") == 5
    assert delta("function_calls_total", "POST") == 1
    assert delta("function_failures_total", "GET") == 3  # an exception, a 503, a timeout
    assert delta("function_failures_total", "POST") == 0
    assert delta("function_duration_seconds_count", "GET") == 5
    assert delta("function_duration_seconds_sum", "GET") > 0
    # Five quick calls: well under a second in all (a duration measured as perf_counter() / started is ~1 each).
    assert delta("function_duration_seconds_sum", "GET") < 0.5


def test_head_calls_have_their_own_label(client):
    """Mutation caught: ``"HEAD"`` left out of ``METHODS`` in funcwsgi/metrics/calls.py (HEAD calls counted as ``other``)."""
    before = samples(client.get("/metrics").text)
    client.head("/")
    after = samples(client.get("/metrics").text)
    assert after[("function_calls_total", "HEAD")] - before.get(("function_calls_total", "HEAD"), 0) == 1
    assert after[("function_calls_total", "other")] == before.get(("function_calls_total", "other"), 0)


def test_the_buckets_are_the_ones_kyma_dashboards_use():
    """Mutations caught: any bound of ``BUCKETS`` changed."""
    from funcwsgi.metrics.calls import LocalCallMetrics

    (duration,) = [family for family in LocalCallMetrics().collect() if family.name == "function_duration_seconds"]
    bounds = [sample.labels["le"] for sample in duration.samples if sample.name.endswith("_bucket") and sample.labels["method"] == "GET"]
    assert bounds == ["0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1.0", "2.5", "5.0", "10.0", "30.0", "60.0", "180.0", "+Inf"]


def test_a_new_process_starts_counting_from_zero():
    """Mutations caught: a series starting at 1 call, failure or second (``self.calls = 1`` ...)."""
    from funcwsgi.metrics.calls import LocalCallMetrics

    assert {sample.value for family in LocalCallMetrics().collect() for sample in family.samples} == {0.0}


@pytest.mark.parametrize(("status", "failed"), [("503 Service Unavailable", 1), ("200 OK", 0), ("404 Not Found", 0)])
def test_a_streamed_body_counts_as_failed_by_its_status(status, failed):
    """Mutation caught: ``== "5"`` made ``> "5"`` in ``MeasuredBody.ended`` (a streamed 503 not counted as failed)."""
    from funcwsgi.metrics.calls import LocalCallMetrics
    from funcwsgi.middleware.metrics import MetricsMiddleware

    metrics = LocalCallMetrics()

    def streams(environ, start_response):
        start_response(status, [])
        return iter([b"a", b"b"])

    body = MetricsMiddleware(streams, metrics)({"REQUEST_METHOD": "GET"}, lambda status, headers, exc_info=None: None)
    assert b"".join(body) == b"ab"
    body.close()
    assert (metrics.series["GET"].calls, metrics.series["GET"].failures) == (1, failed)
    assert 0 < metrics.series["GET"].seconds < 0.5  # to the body's close, not perf_counter() +, * or / its start


def test_a_streamed_body_failing_half_way_counts_as_failed():
    """Mutation caught: ``MeasuredBody.failed`` not noting the failure (``self._failed = False``)."""
    from funcwsgi.metrics.calls import LocalCallMetrics
    from funcwsgi.middleware.metrics import MetricsMiddleware

    metrics = LocalCallMetrics()

    def breaks(environ, start_response):
        start_response("200 OK", [])
        yield b"first,"
        raise RuntimeError("the feed broke")

    body = MetricsMiddleware(breaks, metrics)({"REQUEST_METHOD": "GET"}, lambda status, headers, exc_info=None: None)
    with pytest.raises(RuntimeError):
        b"".join(body)
    body.close()
    assert (metrics.series["GET"].calls, metrics.series["GET"].failures) == (1, 1)


def test_head_of_metrics_has_no_body():
    """Mutation caught: ``== "HEAD"`` made ``>`` in ``MetricsEndpoint`` (HEAD would get the exposition)."""
    from funcwsgi.config import Config
    from funcwsgi.metrics.endpoint import MetricsEndpoint

    endpoint = MetricsEndpoint(Config.from_env({}))
    start = StartResponse()
    body = b"".join(endpoint({"REQUEST_METHOD": b"HEAD".decode()}, start))
    assert body == b"" and int(dict(start.headers)["Content-Length"]) > 0


def test_unknown_methods_share_one_label(client):
    before = samples(client.get("/metrics").text)
    client.open("/", method="BREW")
    after = samples(client.get("/metrics").text)
    assert after[("function_calls_total", "other")] - before.get(("function_calls_total", "other"), 0) == 1


def test_exposition_passes_promtool(client):
    promtool = debian_tool("promtool", "prometheus")
    response = client.get("/metrics")
    assert response.headers["Content-Type"].startswith("text/plain; version=")
    checked = subprocess.run([promtool, "check", "metrics"], input=response.data, capture_output=True, timeout=30)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_disabled_metrics_have_no_layer_and_no_route(client_for):
    client = client_for("observed", server_metrics=False)
    assert "metrics" not in client.application.layers
    assert client.get("/metrics").text == "ok"  # the function's own path now


def test_metrics_path_is_configurable(client_for):
    client = client_for("observed", server_metrics_path="/internal/metrics")
    assert "function_calls_total" in client.get("/internal/metrics").text


# -- a real Prometheus scraping a server with two workers -------------------------


@pytest.fixture(scope="module")
def two_workers():
    with start(GUNICORN, "observed", SERVER_WORKERS="2", SERVER_NUMTHREADS="2") as server:
        yield server


@pytest.fixture(scope="module")
def prometheus(two_workers):
    binary = debian_tool("prometheus", "prometheus")
    folder = Path(tempfile.mkdtemp(prefix="funcwsgi-prometheus-"))
    port = free_port()
    (folder / "prometheus.yml").write_text(
        "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
        "scrape_configs:\n  - job_name: function\n    static_configs:\n"
        f"      - targets: ['127.0.0.1:{two_workers.port}']\n"
    )
    command = [
        binary, f"--config.file={folder / 'prometheus.yml'}", f"--storage.tsdb.path={folder / 'data'}",
        f"--web.listen-address=127.0.0.1:{port}",
    ]
    server = Server(command, base_env(), port)
    try:
        server.wait_ready("/-/ready")
        yield server
    finally:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module", params=["two-workers", "metrics-port"])
def shared_metrics(request):
    """(server, metrics URL) where prometheus_client's multiprocess mode records the calls:
    two workers, or one worker whose calls the main process serves on SERVER_METRICS_PORT."""
    port = free_port()
    settings = {"SERVER_WORKERS": "2"} if request.param == "two-workers" else {"SERVER_WORKERS": "1", "SERVER_METRICS_PORT": str(free_port())}
    env = base_env(HANDLER_FOLDER=function_folder("observed"), SERVER_HOST="127.0.0.1", SERVER_PORT=str(port), SERVER_NUMTHREADS="2", **settings)
    server = Server(GUNICORN, env, port)
    try:
        server.wait_ready()
        metrics_port = settings.get("SERVER_METRICS_PORT")
        yield server, (f"http://127.0.0.1:{metrics_port}/metrics" if metrics_port else server.url + "/metrics")
    finally:
        server.stop()


def test_failures_and_durations_are_recorded_by_every_worker_process(shared_metrics):
    """Mutations caught: ``SharedSeries.record`` not counting failures (no ``self.failures.inc()``)
    or not observing durations (no ``self.duration.observe(seconds)``), and ``call_metrics``
    choosing the single-process series when only ``SERVER_METRICS_PORT`` is set; the metrics
    port serving more than GET and HEAD of its path (``and`` made ``or`` in ``metrics_only``)."""
    server, metrics_url = shared_metrics
    before = samples(requests.get(metrics_url, timeout=5).text)
    for path in ("/", "/fail", "/unavailable", "/marked-failure", "/stream"):
        requests.get(server.url + path, timeout=5, headers={"Connection": "close"})  # new connections: both workers serve
    requests.head(server.url + "/", timeout=5)
    after = samples(requests.get(metrics_url, timeout=5).text)

    def delta(name: str, method: str) -> float:
        return after.get((name, method), 0) - before.get((name, method), 0)

    assert delta("function_calls_total", "GET") == 5
    assert delta("function_failures_total", "GET") == 3  # an exception, a 503, a timeout
    assert delta("function_duration_seconds_count", "GET") == 5
    assert delta("function_duration_seconds_sum", "GET") > 0
    assert (delta("function_calls_total", "HEAD"), delta("function_failures_total", "HEAD")) == (1, 0)
    assert delta("function_duration_seconds_count", "HEAD") == 1
    if metrics_url.startswith(server.url):
        return
    # The metrics port serves GET and HEAD of the metrics path only (``and`` made ``or`` would serve more).
    base = metrics_url.removesuffix("/metrics")
    assert requests.get(base + "/elsewhere", timeout=5).status_code == 404
    assert requests.post(metrics_url, timeout=5).status_code == 404
    assert requests.head(metrics_url, timeout=5).status_code == 200


def query(prometheus: Server, expression: str) -> float | None:
    result = requests.get(prometheus.url + "/api/v1/query", params={"query": expression}, timeout=5).json()["data"]["result"]
    return float(result[0]["value"][1]) if result else None


def test_every_worker_is_counted_in_one_exposition(two_workers):
    before = samples(requests.get(two_workers.url + "/metrics", timeout=5).text).get(("function_calls_total", "PUT"), 0)
    pids, calls = set(), 0
    while len(pids) < 2 and calls < 300:  # new connections until both workers have served
        pids.add(requests.put(two_workers.url + "/pid", timeout=5, headers={"Connection": "close"}).text)
        calls += 1
    assert len(pids) == 2
    after = samples(requests.get(two_workers.url + "/metrics", timeout=5).text)
    assert after[("function_calls_total", "PUT")] - before == calls


def test_prometheus_scrapes_the_number_of_calls(two_workers, prometheus):
    for _ in range(7):
        assert requests.delete(two_workers.url + "/", timeout=5).status_code == 200
    expression = 'sum(function_calls_total{method="DELETE"})'
    deadline = time.monotonic() + 30
    value = None
    while time.monotonic() < deadline:
        value = query(prometheus, expression)
        if value == 7:
            break
        time.sleep(0.2)
    assert value == 7


def test_a_dead_workers_counts_are_kept_and_the_directory_goes_at_exit():
    import os
    import signal

    port = free_port()
    env = base_env(
        HANDLER_FOLDER=function_folder("observed"), SERVER_HOST="127.0.0.1", SERVER_PORT=str(port), SERVER_WORKERS="2", SERVER_NUMTHREADS="2",
        SERVER_LOG_LEVEL="debug",  # the directory is named in a debug record
    )
    server = Server(GUNICORN, env, port)
    try:
        server.wait_ready()
        records = log_records(server.stdout)
        folder = Path(next(r["message"] for r in records if r["message"].startswith("Metrics of all worker")).rsplit(" ", 1)[1])
        pids, calls = set(), 0
        while len(pids) < 2 and calls < 300:
            pids.add(int(requests.patch(server.url + "/pid", timeout=5, headers={"Connection": "close"}).text))
            calls += 1
        assert len({p.name for p in folder.glob("*.db")}) >= 2  # one file set per worker
        victim = pids.pop()
        os.kill(victim, signal.SIGKILL)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:  # the master replaces the worker
            seen = {int(requests.get(server.url + "/pid", timeout=5, headers={"Connection": "close"}).text) for _ in range(6)}
            if seen - pids - {victim}:
                break
        total = samples(requests.get(server.url + "/metrics", timeout=5).text)[("function_calls_total", "PATCH")]
        assert total == calls
    finally:
        server.stop()
    assert not folder.exists()
