"""metrics/endpoint.py: ``GET /metrics``, its exposition (promtool checks it) and its path."""

from __future__ import annotations

import subprocess

from ..support.processes import debian_tool
from ..support.wsgi import StartResponse


def test_head_of_metrics_has_no_body():
    """Mutation caught: ``== "HEAD"`` made ``>`` in ``MetricsEndpoint`` (HEAD would get the exposition)."""
    from funcwsgi.config import Config
    from funcwsgi.metrics.endpoint import MetricsEndpoint

    endpoint = MetricsEndpoint(Config.from_env({}))
    start = StartResponse()
    body = b"".join(endpoint({"REQUEST_METHOD": b"HEAD".decode()}, start))
    assert body == b"" and int(dict(start.headers)["Content-Length"]) > 0


def test_exposition_passes_promtool(client_for):
    promtool = debian_tool("promtool", "prometheus")
    response = client_for("observed").get("/metrics")
    assert response.headers["Content-Type"].startswith("text/plain; version=")
    checked = subprocess.run([promtool, "check", "metrics"], input=response.data, capture_output=True, timeout=30)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_metrics_path_is_configurable(client_for):
    client = client_for("observed", server_metrics_path="/internal/metrics")
    assert "function_calls_total" in client.get("/internal/metrics").text
