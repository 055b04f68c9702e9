"""Tracing against a real OTLP receiver (oteltap) and a real gunicorn server with two workers."""

from __future__ import annotations

import json
import logging

import pytest
import requests

from ..support.logs import log_records
from ..support.paths import function_folder
from ..support.polling import wait_for
from ..support.ports import free_port
from ..support.processes import GUNICORN, Server, base_env, start

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
CALLER_SPAN = "00f067aa0ba902b7"
SERVER, CLIENT = 2, 3  # OTLP span kinds


@pytest.fixture(scope="module")
def server(collector, receiver):
    with start(
        GUNICORN, "observed", SERVER_WORKERS="2",
        TRACE_COLLECTOR_ENDPOINT=f"http://127.0.0.1:{collector.port}/v1/traces", FUNC_NAME="orders", FUNC_NAMESPACE="shop",
        PUBLISHER_PROXY_ADDRESS=receiver.url + "/ok", OTEL_BSP_SCHEDULE_DELAY="100", SERVER_ACCESS_LOG="true",
    ) as running:
        yield running


def spans(collector: Server) -> list[dict]:
    return log_records(collector.stdout)


def wait_for_spans(collector: Server, trace_id: str, count: int, timeout: float = 15.0) -> list[dict]:
    def arrived() -> list[dict] | None:
        found = [span for span in spans(collector) if span["traceId"] == trace_id]
        return found if len(found) >= count else None

    return wait_for(arrived, timeout, f"{count} spans of trace {trace_id}", lambda: collector.stdout)


def attribute(span: dict, key: str) -> str | None:
    for item in span["attributes"]:
        if item["key"] == key:
            return next(iter(item["value"].values()))
    return None


def test_startup_lines_stay_plain(server, collector):
    lines = server.stdout.splitlines()
    assert lines[1] == f"Tracing configured with endpoint http://127.0.0.1:{collector.port}/v1/traces"
    assert not lines[0].startswith("{") and lines[3].startswith("Starting python314 server")
    assert json.loads(lines[4])["message"].startswith("Middleware stack: http > errors > http2 > request-id > access-log > reserved-routes > tracing")


def test_spans_continue_the_callers_trace(server, collector, receiver):
    before = len(receiver.received)
    response = requests.get(
        server.url + "/work",
        params={"call": server.url + "/healthz", "publish": "1"},
        headers={"traceparent": f"00-{TRACE_ID}-{CALLER_SPAN}-01", "X-Request-Id": "traced-1"},
        timeout=10,
    )
    assert response.status_code == 204
    found = wait_for_spans(collector, TRACE_ID, 4)
    server_span = next(s for s in found if s["kind"] == SERVER)
    work = next(s for s in found if s["name"] == "work")
    clients = [s for s in found if s["kind"] == CLIENT]
    assert server_span["parentSpanId"] == CALLER_SPAN
    assert work["parentSpanId"] == server_span["spanId"]
    assert len(clients) == 2 and all(c["parentSpanId"] == work["spanId"] for c in clients)
    assert {attribute(c, "http.request.method") or attribute(c, "http.method") for c in clients} == {"GET", "POST"}
    # the published event carries the trace on to the proxy, as a child of its client span
    publish = next(c for c in clients if (attribute(c, "http.request.method") or attribute(c, "http.method")) == "POST")
    arrived = receiver.wait_for(before + 1)[-1]
    assert arrived.headers["traceparent"].split("-")[1:3] == [TRACE_ID, publish["spanId"]]
    # the function's log line and the access log carry the ids
    records = log_records(server.stdout)
    logged = next(r for r in records if r.get("message") == "got order")
    assert (logged["trace_id"], logged["span_id"], logged["request_id"]) == (TRACE_ID, work["spanId"], "traced-1")
    assert (logged["function"], logged["namespace"], logged["order"]) == ("orders", "shop", 7)
    access = next(r for r in records if r.get("logger") == "funcwsgi.access" and r.get("request_id") == "traced-1")
    assert (access["trace_id"], access["span_id"]) == (TRACE_ID, server_span["spanId"])


@pytest.mark.parametrize(
    ("path", "status", "error"),
    [("/?id=7", 200, False), ("/fail", 500, True), ("/unavailable", 503, True), ("/stream", 200, False)],
    ids=["ok", "exception", "5xx", "streamed"],
)
def test_the_server_span_names_the_call_and_its_outcome(server, collector, path, status, error):
    trace_id = format(hash(path) & (2**128 - 1), "032x")
    headers = {"traceparent": f"00-{trace_id}-{'e' * 16}-01"}
    assert requests.get(server.url + path, headers=headers, timeout=10).status_code == status
    (span,) = wait_for_spans(collector, trace_id, 1)
    bare_path, _, query = path.partition("?")
    assert span["name"] == f"GET {bare_path}" and span["kind"] == SERVER
    assert attribute(span, "http.request.method") == "GET" and attribute(span, "url.path") == bare_path
    assert attribute(span, "url.query") == (query or None)
    assert attribute(span, "error.type") == ("RuntimeError" if path == "/fail" else None)
    assert int(attribute(span, "http.response.status_code")) == status
    assert (span.get("status", {}).get("code") == 2) is error  # STATUS_CODE_ERROR
    if path == "/fail":
        (event,) = span["events"]
        assert event["name"] == "exception" and attribute(event, "exception.type") == "RuntimeError"


def test_a_streamed_body_failing_half_way_marks_its_span_as_an_error(server, collector):
    """The status was sent (200) before the body broke: only the span can tell the call failed.

    Mutation caught: ``SpanBody.failed`` in funcwsgi/middleware/tracing.py recording nothing.
    """
    trace_id = "f" * 31 + "1"
    headers = {"traceparent": f"00-{trace_id}-{'e' * 16}-01"}
    try:
        requests.get(server.url + "/stream-fail", headers=headers, timeout=10).close()
    except requests.RequestException:
        pass  # the server cuts the chunked body off where it broke
    (span,) = wait_for_spans(collector, trace_id, 1)
    assert span["name"] == "GET /stream-fail" and int(attribute(span, "http.response.status_code")) == 200
    assert span.get("status", {}).get("code") == 2  # STATUS_CODE_ERROR
    (event,) = span["events"]
    assert event["name"] == "exception" and attribute(event, "exception.type") == "RuntimeError"


def test_b3_multi_headers_are_continued(server, collector):
    trace_id, parent = "a" * 32, "b" * 16
    headers = {"X-B3-TraceId": trace_id, "X-B3-SpanId": parent, "X-B3-Sampled": "1"}
    assert requests.get(server.url + "/", headers=headers, timeout=10).status_code == 200
    (span,) = wait_for_spans(collector, trace_id, 1)
    assert span["parentSpanId"] == parent and span["kind"] == SERVER


def test_reserved_routes_make_no_spans(server, collector):
    for path in ("/healthz", "/metrics", "/favicon.ico"):
        assert requests.get(server.url + path, timeout=10).status_code < 300
    marker = "c" * 32
    for _ in range(4):  # reach both workers' exporters; each batch holds what came before
        requests.get(server.url + "/after-reserved", headers={"traceparent": f"00-{marker}-{'d' * 16}-01", "Connection": "close"}, timeout=10)
    wait_for_spans(collector, marker, 4)
    paths = {attribute(s, "url.path") or attribute(s, "http.target") for s in spans(collector) if s["kind"] == SERVER}
    assert "/after-reserved" in paths
    assert not paths & {"/healthz", "/metrics", "/favicon.ico"}


def test_tracing_layer_absent_without_an_endpoint(client_for):
    assert "tracing" not in client_for("observed").application.layers


def test_unknown_propagator_stops_start_up_with_one_line():
    from ..support.processes import run_to_exit

    env = base_env(
        HANDLER_FOLDER=function_folder("observed"), SERVER_HOST="127.0.0.1", SERVER_PORT=str(free_port()),
        TRACE_COLLECTOR_ENDPOINT="http://127.0.0.1:9/v1/traces", OTEL_PROPAGATORS="tracecontext,zipkin",
    )
    result = run_to_exit(GUNICORN, env)
    assert result.returncode == 2
    assert "funcwsgi: error: OTEL_PROPAGATORS='tracecontext,zipkin' is invalid: no propagator 'zipkin'; installed: b3, b3multi, baggage, none, tracecontext" in result.stderr
    assert "Traceback" not in result.stderr


def test_propagators_are_checked_at_start_up_not_while_the_settings_are_read():
    from funcwsgi.compat import resolve
    from funcwsgi.config import Config
    from funcwsgi.errors import ConfigError
    from funcwsgi.middleware.tracing import build_propagator

    config = Config.from_env({"HANDLER_FOLDER": function_folder("hello"), "OTEL_PROPAGATORS": "tracecontext,zipkin"})
    expected = "OTEL_PROPAGATORS='tracecontext,zipkin' is invalid: no propagator 'zipkin'; installed: b3, b3multi, baggage, none, tracecontext"
    with pytest.raises(ConfigError) as refused:
        resolve(config)
    assert str(refused.value) == expected
    # A service made around a given callable skips resolve(): the tracing layer refuses the same way.
    with pytest.raises(ConfigError) as refused:
        build_propagator(("tracecontext", "zipkin"))
    assert str(refused.value) == expected
    assert resolve(Config.from_env({"HANDLER_FOLDER": function_folder("hello"), "OTEL_PROPAGATORS": "b3,none"})).otel_propagators == ("b3", "none")


def test_the_resource_is_hashed_once(monkeypatch):
    """The exporter hashes the resource of every span; OpenTelemetry would write its attributes out as JSON each time."""
    from opentelemetry.sdk import resources

    from funcwsgi.middleware.tracing import hashed_once

    resource = resources.Resource({"service.name": "orders", "service.namespace": "shop"}, "https://opentelemetry.io/schemas/1.21.0")
    hashed = hashed_once(resource)
    assert (dict(hashed.attributes), hashed.schema_url) == (dict(resource.attributes), resource.schema_url)
    assert hashed == resource and hash(hashed) == hash(resource)

    def dumps(*args, **kwargs):
        raise AssertionError("the resource was hashed again")

    monkeypatch.setattr(resources, "dumps", dumps)
    assert {hashed: 1}[hashed] == 1


def test_malformed_propagation_headers_are_logged_once_a_minute_without_the_callers_text(caplog):
    from funcwsgi.middleware.tracing import CallersMalformedHeaders

    logger = logging.getLogger("funcwsgi-test.opentelemetry.trace.span")
    quiet = CallersMalformedHeaders()
    logger.addFilter(quiet)
    try:
        with caplog.at_level(logging.WARNING, logger=logger.name):
            for _ in range(3):
                logger.warning("Member doesn't match the w3c identifiers format %s", "A" * 7500)
            logger.error("an error passes as it is")
        quiet.burst._quiet_until = float("-inf")  # a minute later
        with caplog.at_level(logging.WARNING, logger=logger.name):
            logger.warning("Invalid key/value pair (%s, %s) found.", "k", "v")
    finally:
        logger.removeFilter(quiet)
    messages = [record.getMessage() for record in caplog.records]
    assert messages == [
        "A trace context or baggage header was malformed and was ignored (0 more since the last report; the text is not logged)",
        "an error passes as it is",
        "A trace context or baggage header was malformed and was ignored (2 more since the last report; the text is not logged)",
    ]
