"""OpenTelemetry's FaaS conventions on both runtimes: span attributes and OTLP metrics, against a real receiver (oteltap).

Each runtime serves the conformance kit's ``main`` fixture in one process, so
the process's first call is known (the cold start), with its own oteltap.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import requests

from funcwsgi.config import Config
from funcwsgi.errors import ConfigError

from ..support.logs import log_records
from ..support.paths import BIN, REPO
from ..support.polling import wait_for
from ..support.ports import free_port
from ..support.processes import GUNICORN, Server, base_env
from .test_tracing import SERVER, attribute, spans

FIXTURES = REPO / "tests" / "conformance" / "fixture"
COMMANDS = {
    "python": GUNICORN,
    "nodejs26": [str(REPO / "nodejs26" / "bin" / "serve")],
}
#: The calls every check reads, in order: the first is the process's cold start; /raise fails, /sleep times out.
CALLS = ("/hello", "/hello", "/raise", "/sleep?seconds=3", "/hello")


@pytest.fixture(scope="module", params=sorted(COMMANDS))
def runtime(request) -> Iterator[tuple[Server, Server]]:
    """(the runtime, its oteltap), after the calls of CALLS."""
    tap_port, port = free_port(), free_port()
    tap = Server([str(BIN / "oteltap"), "--port", str(tap_port)], base_env(), tap_port)
    tap.wait_for_output("Listening")
    env = base_env(
        HANDLER_FOLDER=str(FIXTURES / request.param / "main"), SERVER_HOST="127.0.0.1", SERVER_PORT=str(port), SERVER_CALL_TIMEOUT="1",
        TRACE_COLLECTOR_ENDPOINT=f"http://127.0.0.1:{tap_port}/v1/traces", SERVER_METRICS_OTLP="true",
        FUNC_NAME="orders", FUNC_VERSION="7", OTEL_BSP_SCHEDULE_DELAY="100", OTEL_METRIC_EXPORT_INTERVAL="200",
    )
    running = Server(COMMANDS[request.param], env, port)
    try:
        running.wait_ready()
        for number, path in enumerate(CALLS):
            requests.get(running.url + path, headers={"X-Request-Id": f"faas-{number}"}, timeout=10)
        yield running, tap
    finally:
        running.stop()
        tap.stop()


def server_spans(collector: Server) -> dict[str, dict]:
    return {attribute(s, "faas.invocation_id"): s for s in spans(collector) if s.get("kind") == SERVER and attribute(s, "faas.invocation_id")}


def test_server_spans_carry_the_faas_attributes(runtime):
    _, collector = runtime
    found = wait_for(lambda: (lambda seen: seen if len(seen) >= 5 else None)(server_spans(collector)), what="five server spans")
    for number in range(5):
        span = found[f"faas-{number}"]
        assert attribute(span, "faas.trigger") == "http"
        assert (attribute(span, "faas.name"), attribute(span, "faas.version")) == ("orders", "7")
        assert attribute(span, "faas.coldstart") is (number == 0), number


def metric_points(collector: Server) -> dict[str, list[dict]]:
    """The last data points oteltap printed of each metric, by name."""
    latest: dict[str, list[dict]] = {}
    for record in log_records(collector.stdout):
        if "name" in record and any(kind in record for kind in ("sum", "histogram", "gauge")):
            kind = next(kind for kind in ("sum", "histogram", "gauge") if kind in record)
            latest[record["name"]] = record[kind]["dataPoints"]
    return latest


def value(points: list[dict]) -> float:
    (point,) = points
    assert point["attributes"] == [{"key": "faas.trigger", "value": {"stringValue": "http"}}]
    return float(point.get("asInt", point.get("asDouble", point.get("count", 0))))


def test_metrics_in_the_faas_names_reach_the_collector(runtime):
    server, collector = runtime

    def complete() -> dict[str, list[dict]] | None:
        points = metric_points(collector)
        return points if "faas.invocations" in points and value(points["faas.invocations"]) >= 5 else None

    points = wait_for(complete, what="faas.invocations reaching 5")
    assert value(points["faas.invocations"]) == 5
    assert value(points["faas.coldstarts"]) == 1
    assert value(points["faas.errors"]) == 2  # the exception and the timed-out call
    assert value(points["faas.timeouts"]) == 1
    assert value(points["faas.invoke_duration"]) == 5
    # Beside the Prometheus series, not instead of them.
    assert 'function_calls_total{method="GET"} 5' in requests.get(server.url + "/metrics", timeout=10).text


def test_the_metrics_endpoint_is_the_standard_variable_or_the_collectors_host():
    assert Config.from_env({}).otlp_metrics_endpoint is None
    given = {"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://metrics:4318/v1/metrics", "TRACE_COLLECTOR_ENDPOINT": "http://traces:4318/v1/traces"}
    assert Config.from_env(given).otlp_metrics_endpoint == "http://metrics:4318/v1/metrics"
    derived = {"TRACE_COLLECTOR_ENDPOINT": "http://collector.kyma-system:4318/v1/traces", "SERVER_METRICS_OTLP": "true"}
    assert Config.from_env(derived).otlp_metrics_endpoint == "http://collector.kyma-system:4318/v1/metrics"
    assert Config.from_env({"TRACE_COLLECTOR_ENDPOINT": "http://c:4318/v1/traces"}).otlp_metrics_endpoint is None
    with pytest.raises(ConfigError, match="SERVER_METRICS_OTLP=true is refused without TRACE_COLLECTOR_ENDPOINT"):
        Config.from_env({"SERVER_METRICS_OTLP": "true"})
    with pytest.raises(ConfigError, match="OTEL_EXPORTER_OTLP_METRICS_ENDPOINT='metrics:4318' is invalid"):
        Config.from_env({"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "metrics:4318"})
