"""middleware/call_metrics.py: the layer counts each call, its failure and its duration, by method."""

from __future__ import annotations

import pytest

from ..support.edge_client import edge_client
from ..support.metrics import by_method as samples
from ..support.paths import function_folder


@pytest.fixture(scope="module", params=["werkzeug", "edge"])
def client(request):
    """werkzeug's test client (no server call: the layer notes the status with a start_response of its own), and the
    edge worker's call runner (its call takes the answer: the layer reads the status from it)."""
    from werkzeug.test import Client

    from funcwsgi import make_app

    service = make_app(environ={}, handler_folder=function_folder("observed"))
    if request.param == "werkzeug":
        yield Client(service)
    else:
        yield from edge_client(service)


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


@pytest.mark.parametrize(("status", "failed"), [("503 Service Unavailable", 1), ("200 OK", 0), ("404 Not Found", 0)])
def test_a_streamed_body_counts_as_failed_by_its_status(status, failed):
    """Mutation caught: ``== "5"`` made ``> "5"`` in ``MeasuredBody.ended`` (a streamed 503 not counted as failed)."""
    from funcwsgi.metrics.calls import LocalCallMetrics
    from funcwsgi.middleware.call_metrics import MetricsMiddleware

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
    from funcwsgi.middleware.call_metrics import MetricsMiddleware

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


def test_unknown_methods_share_one_label(client):
    before = samples(client.get("/metrics").text)
    client.open("/", method="BREW")
    after = samples(client.get("/metrics").text)
    assert after[("function_calls_total", "other")] - before.get(("function_calls_total", "other"), 0) == 1


def test_disabled_metrics_have_no_layer_and_no_route(client_for):
    client = client_for("observed", server_metrics=False)
    assert "metrics" not in client.application.layers
    assert client.get("/metrics").text == "ok"  # the function's own path now
