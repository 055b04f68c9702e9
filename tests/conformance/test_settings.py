"""C11: launches with other settings: the compatibility names and their precedence, switches, CORS, tracing."""

from __future__ import annotations

import time

import pytest

from ..support.logs import log_records
from ..support.polling import wait_for
from ..support.ports import KIT as PORTS
from .kit import TIMEOUT_BODY, call, event_receiver

HALF_MEGABYTE = 512 * 1024


@pytest.fixture(scope="module")
def compat(launcher):
    """The main fixture configured by Kyma's and Kubeless's names only."""
    port, other = PORTS.take(), PORTS.take()
    settings = {
        "HANDLER_PATH": str(launcher.fixture("main")),  # Kyma's HANDLER_FOLDER
        "HANDLER_FUNC_NAME": "main",
        "FUNC_PORT": str(port),  # Kubeless's; wins over PORT (the Functions Framework's)
        "PORT": str(other),
        "FUNC_TIMEOUT": "1",
        "FUNC_BODY_MB_LIMIT": "0.5",  # Kyma's, in megabytes; wins over Kubeless's FUNC_MEMFILE_MAX
        "FUNC_MEMFILE_MAX": "10",
        "FUNC_NAME": "compat",
        "FUNC_NAMESPACE": "main-name",  # the main name wins over the alias
        "SERVICE_NAMESPACE": "alias-name",
        "SERVER_METRICS": "false",
    }
    running = launcher.start(None, settings, port=port)
    try:
        yield running
    finally:
        running.stop()


def test_compat_names_choose_the_port_the_folder_and_the_function(compat, launcher):
    lines = compat.stdout.splitlines()
    assert lines[0] == f"Importing function sources from {launcher.module_file('main')}:main", lines[:4]
    assert lines[3] == f"Starting {launcher.runtime_name} server 127.0.0.1:{compat.port}", lines[:4]
    assert lines[2] == "Publisher Proxy not configured: PUBLISHER_PROXY_ADDRESS is not set"


def test_compat_names_reach_the_sdk_and_the_main_name_wins(compat, launcher):
    answer = call(launcher, "GET", compat.url + "/sdk", timeout=10).json()
    assert (answer["function"], answer["namespace"], answer["timeout"], answer["body_limit"]) == ("compat", "main-name", 1, 0.5)


def test_func_timeout_is_the_call_timeout(compat, launcher):
    began = time.monotonic()
    response = call(launcher, "GET", compat.url + "/sleep?seconds=4", timeout=10)
    assert (response.status_code, response.text) == (408, TIMEOUT_BODY)
    assert 0.9 <= time.monotonic() - began < 2.0


def test_func_body_mb_limit_is_the_body_limit(compat, launcher):
    assert call(launcher, "POST", compat.url + "/size", data=b"x" * HALF_MEGABYTE, timeout=10).text == str(HALF_MEGABYTE)
    assert call(launcher, "POST", compat.url + "/size", data=b"x" * (HALF_MEGABYTE + 1), timeout=10).status_code == 413


def test_metrics_switched_off_leave_the_path_to_the_function(compat, launcher):
    assert call(launcher, "GET", compat.url + "/metrics", timeout=10).text == "fixture GET /metrics"


TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
B3_TRACE_ID = "80f198ee56343ba864fe8b2a57d3eff7"


@pytest.fixture(scope="module")
def options(launcher):
    """The main fixture with non-default switches: a metrics port and path, the access log, CORS, labels, a runtime name, tracing to the kit."""
    collector, publisher, metrics_port = PORTS.take(), PORTS.take(), PORTS.take()
    spans: list[dict[str, object]] = []
    published: list[dict[str, object]] = []
    settings = {
        "SERVER_METRICS_PATH": "/prom",
        "SERVER_METRICS_PORT": str(metrics_port),
        "SERVER_ACCESS_LOG": "true",
        "FUNC_NAME": "options",
        "FUNC_LABELS": "team=kit,tier=test",
        "PUBLISHER_PROXY_ADDRESS": f"http://127.0.0.1:{publisher}/publish",
        "SERVER_CORS_ORIGINS": "https://shop.example",
        "FUNC_RUNTIME": "custom-runtime",
        "TRACE_COLLECTOR_ENDPOINT": f"http://127.0.0.1:{collector}/v1/traces",
        "OTEL_BSP_SCHEDULE_DELAY": "100",
    }
    with event_receiver(collector, spans), event_receiver(publisher, published):
        running = launcher.start("main", settings)
        running.exports = spans  # type: ignore[attr-defined]
        running.published = published  # type: ignore[attr-defined]
        running.collector = collector  # type: ignore[attr-defined]
        running.metrics_port = metrics_port  # type: ignore[attr-defined]
        running.launcher = launcher  # type: ignore[attr-defined]
        try:
            yield running
        finally:
            running.stop()


def get(running, path, **kwargs):
    kwargs.setdefault("timeout", 10)
    return call(running.launcher, kwargs.pop("method", "GET"), running.url + path, **kwargs)


def test_func_runtime_and_the_tracing_endpoint_in_the_startup_lines(options, launcher):
    lines = options.stdout.splitlines()
    assert lines[1] == f"Tracing configured with endpoint http://127.0.0.1:{options.collector}/v1/traces", lines[:4]
    assert lines[3] == f"Starting custom-runtime server 127.0.0.1:{options.port}", lines[:4]
    answer = get(options, "/sdk").json()
    assert (answer["runtime"], answer["labels"]) == ("custom-runtime", {"team": "kit", "tier": "test"})


def test_metrics_move_to_their_own_port_and_path(options):
    import requests

    get(options, "/hello")
    # The metrics port is scraped over HTTP/1.1, whatever the calls' port speaks.
    moved = requests.get(f"http://127.0.0.1:{options.metrics_port}/prom", timeout=10)
    assert moved.status_code == 200 and "function_calls_total" in moved.text
    assert get(options, "/prom").text == "fixture GET /prom", "the calls' port leaves the path to the function"
    assert get(options, "/metrics").text == "fixture GET /metrics"


def _records(options):
    return log_records(options.stdout)


def test_the_access_log_has_one_record_per_call(options):
    get(options, "/status/201", headers={"X-Request-Id": "kit-access-1"})
    wait_for(lambda: any(r.get("request_id") == "kit-access-1" and r.get("status") == 201 for r in _records(options)), 5, "the access record")
    record = next(r for r in _records(options) if r.get("request_id") == "kit-access-1" and r.get("status") == 201)
    assert (record["method"], record["path"], record["status"]) == ("GET", "/status/201", 201)
    assert record["bytes"] == len("status 201") and float(record["duration_ms"]) >= 0
    assert record["function"] == "options" and record["level"] == "INFO"


def test_a_cors_preflight_from_an_allowed_origin(options):
    response = get(options, "/hello", method="OPTIONS", headers={"Origin": "https://shop.example", "Access-Control-Request-Method": "POST"})
    assert response.status_code == 204
    assert response.headers["Access-Control-Allow-Origin"] == "https://shop.example"
    assert "POST" in [m.strip() for m in response.headers["Access-Control-Allow-Methods"].split(",")]
    assert response.headers["Access-Control-Max-Age"] == "600"


def test_a_cors_preflight_from_another_origin_is_403(options):
    response = get(options, "/hello", method="OPTIONS", headers={"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"})
    assert response.status_code == 403


def test_calls_from_an_allowed_origin_are_marked(options):
    allowed = get(options, "/hello", headers={"Origin": "https://shop.example"})
    assert allowed.text == "hello" and allowed.headers["Access-Control-Allow-Origin"] == "https://shop.example"
    assert "Access-Control-Allow-Origin" not in get(options, "/hello", headers={"Origin": "https://evil.example"}).headers


def _exported(options, trace_id: str) -> bool:
    raw = bytes.fromhex(trace_id)  # OTLP protobuf carries trace ids as 16 raw bytes
    return any(raw in event["body"] for event in options.exports)  # type: ignore[operator]


def test_an_incoming_w3c_trace_is_continued_and_exported_over_otlp_http(options):
    response = get(options, "/hello", headers={"traceparent": f"00-{TRACE_ID}-00f067aa0ba902b7-01"})
    assert response.status_code == 200
    wait_for(lambda: _exported(options, TRACE_ID), 15, "a span of the caller's W3C trace at the collector")
    event = next(e for e in options.exports if bytes.fromhex(TRACE_ID) in e["body"])  # type: ignore[operator]
    assert event["path"] == "/v1/traces"
    assert event["headers"]["content-type"] == "application/x-protobuf"


def test_an_incoming_b3_trace_is_continued(options):
    headers = {"X-B3-TraceId": B3_TRACE_ID, "X-B3-SpanId": "e457b5a2e4d86bd1", "X-B3-Sampled": "1"}
    assert get(options, "/hello", headers=headers).status_code == 200
    wait_for(lambda: _exported(options, B3_TRACE_ID), 15, "a span of the caller's B3 trace at the collector")


def test_log_records_of_a_traced_call_carry_its_trace_id(options):
    import uuid

    marker = uuid.uuid4().hex
    get(options, f"/log?id={marker}", headers={"traceparent": f"00-{TRACE_ID}-00f067aa0ba902b7-01"})
    wait_for(lambda: any(r.get("message") == f"conformance log line {marker}" for r in _records(options)), 5, "the function's record")
    record = next(r for r in _records(options) if r.get("message") == f"conformance log line {marker}")
    assert record["trace_id"] == TRACE_ID and len(record["span_id"]) == 16


def test_an_emitted_event_carries_the_calls_trace(options):
    response = get(options, "/cloudevent/emit?n=1", method="POST", headers={"traceparent": f"00-{TRACE_ID}-00f067aa0ba902b7-01"})
    assert response.status_code == 204
    wait_for(lambda: bool(options.published), 5, "the emitted event")
    traceparent = options.published[-1]["headers"].get("traceparent", "")
    assert traceparent.split("-")[1:2] == [TRACE_ID], options.published[-1]["headers"]
