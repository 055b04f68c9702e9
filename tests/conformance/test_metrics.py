"""C6: Prometheus metrics under the names Kubeless and Kyma dashboards use."""

from __future__ import annotations

from .kit import METRICS, metric_total


def metrics(runtime) -> str:
    response = runtime.get("/metrics")
    assert response.status_code == 200
    assert response.headers["Content-Type"].startswith("text/plain")
    return response.text


def test_metric_names(runtime):
    runtime.get("/hello")
    text = metrics(runtime)
    for name in METRICS:
        assert f"# TYPE {name.removesuffix('_total')} " in text or f"# TYPE {name} " in text, name
    assert "function_duration_seconds_bucket{" in text


def test_calls_are_counted_by_method(runtime):
    before = metric_total(metrics(runtime), "function_calls_total", method="GET")
    for _ in range(3):
        runtime.get("/hello")
    assert metric_total(metrics(runtime), "function_calls_total", method="GET") == before + 3


def test_failures_are_counted(runtime):
    before = metric_total(metrics(runtime), "function_failures_total")
    runtime.get("/raise")
    assert metric_total(metrics(runtime), "function_failures_total") == before + 1


def test_reserved_routes_are_not_counted(runtime):
    before = metric_total(metrics(runtime), "function_calls_total")
    runtime.get("/healthz")
    runtime.get("/favicon.ico")
    assert metric_total(metrics(runtime), "function_calls_total") == before
