"""C6: Prometheus metrics under the names, labels and buckets Kubeless and Kyma dashboards use."""

from __future__ import annotations

from ..support.metrics import metric_total, samples
from ..support.polling import wait_for
from .kit import BUCKETS, METRICS


def metrics(runtime) -> str:
    response = runtime.get("/metrics")
    assert response.status_code == 200
    assert response.headers["Content-Type"].startswith("text/plain")
    return response.text


def test_metric_names_and_types(runtime):
    runtime.get("/hello")
    text = metrics(runtime)
    assert "# TYPE function_calls_total counter" in text or "# TYPE function_calls counter" in text
    assert "# TYPE function_failures_total counter" in text or "# TYPE function_failures counter" in text
    assert "# TYPE function_duration_seconds histogram" in text
    for name in METRICS:
        assert f"# HELP {name.removesuffix('_total')}" in text or f"# HELP {name}" in text, name


def test_every_series_is_labelled_by_method_only(runtime):
    runtime.get("/hello")
    text = metrics(runtime)
    for name in ("function_calls_total", "function_failures_total", "function_duration_seconds_sum", "function_duration_seconds_count"):
        found = samples(text, name)
        assert found, name
        assert all(set(labels) == {"method"} for labels, _ in found), (name, found)
    buckets = samples(text, "function_duration_seconds_bucket")
    assert buckets and all(set(labels) == {"method", "le"} for labels, _ in buckets)


def test_duration_buckets_are_5ms_to_180s(runtime):
    runtime.get("/hello")
    text = metrics(runtime)
    bounds = [float(labels["le"]) for labels, _ in samples(text, "function_duration_seconds_bucket") if labels["method"] == "GET"]
    assert bounds == list(BUCKETS)


def test_calls_are_counted_by_method(runtime):
    before = metrics(runtime)
    for _ in range(3):
        runtime.get("/hello")
    runtime.request("PUT", "/hello")
    after = metrics(runtime)
    assert metric_total(after, "function_calls_total", method="GET") == metric_total(before, "function_calls_total", method="GET") + 3
    assert metric_total(after, "function_calls_total", method="PUT") == metric_total(before, "function_calls_total", method="PUT") + 1
    assert metric_total(after, "function_duration_seconds_count", method="GET") == metric_total(before, "function_duration_seconds_count", method="GET") + 3


def test_an_unusual_method_is_counted_as_other(runtime):
    before = metric_total(metrics(runtime), "function_calls_total", method="other")
    runtime.request("PURGE", "/hello")
    text = metrics(runtime)
    assert metric_total(text, "function_calls_total", method="other") == before + 1
    assert not samples(text, "function_calls_total") or all(labels["method"] != "PURGE" for labels, _ in samples(text, "function_calls_total"))


def test_failures_are_counted(runtime):
    before = metric_total(metrics(runtime), "function_failures_total", method="GET")
    runtime.get("/raise")
    assert metric_total(metrics(runtime), "function_failures_total", method="GET") == before + 1


def test_a_timeout_is_counted_as_a_failure(runtime):
    before = metric_total(metrics(runtime), "function_failures_total", method="GET")
    assert runtime.get(f"/sleep?seconds={runtime.settings.call_timeout + 0.5}").status_code == 408
    # Counted when the call ends: at the deadline, or when a blocked call comes back.
    wait_for(lambda: metric_total(metrics(runtime), "function_failures_total", method="GET") == before + 1, 5, "the timeout counted")


def test_reserved_routes_are_not_counted(runtime):
    before = metric_total(metrics(runtime), "function_calls_total")
    for path in ("/healthz", "/health/readiness", "/health/liveness", "/favicon.ico", "/metrics"):
        runtime.get(path)
    assert metric_total(metrics(runtime), "function_calls_total") == before
