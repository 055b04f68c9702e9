"""metrics/multiprocess.py and metrics/port.py: calls counted by every worker process, served in one exposition.

Real gunicorn servers with two workers, or one worker and ``SERVER_METRICS_PORT``, and a real
Prometheus scraping them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import requests

from ..support.logs import log_records
from ..support.metrics import by_method as samples
from ..support.paths import function_folder
from ..support.ports import free_port
from ..support.processes import GUNICORN, Server, base_env, debian_tool, start


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


@pytest.mark.slow("starts a real Prometheus, which scrapes every second, and waits for its sum")
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



def test_a_directory_the_operator_names_is_emptied_of_old_values_only(tmp_path):
    """A restarted pod that keeps its directory must not add up the last run's counts again."""
    for name in ("counter_1.db", "histogram_2.db", ".hidden.db", "notes.txt"):
        (tmp_path / name).write_bytes(b"old")
    script = "from funcwsgi.metrics.multiprocess import use_multiprocess_dir; use_multiprocess_dir()"
    env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(tmp_path)}
    subprocess.run([sys.executable, "-c", script], env=env, check=True, timeout=60)
    assert sorted(path.name for path in tmp_path.iterdir()) == [".hidden.db", "notes.txt"]
