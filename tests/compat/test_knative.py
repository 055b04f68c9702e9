"""Knative func-python functions, in the layout `func create -l python` writes, served unchanged."""

from __future__ import annotations

import json
import time

import pytest
import requests

from ..support.paths import function_folder
from ..support.ports import free_port
from ..support.processes import GUNICORN, SERVE, Server, base_env, start
from . import serving


@pytest.fixture(scope="module")
def servers():
    with serving(
        {
            # func.yaml with the python runtime beside function/func.py.
            "instance": {"HANDLER_FOLDER": function_folder("knative_instance"), "GREETING": "hi"},
            # What func-python's own server reads: LISTEN_ADDRESS.
            "handle": {"HANDLER_FOLDER": function_folder("knative_handle"), "LISTEN_ADDRESS": "127.0.0.1:8080"},
        }
    ) as running:
        yield running


def test_instance_handle_sees_the_asgi_scope(servers):
    response = requests.post(servers["instance"].url + "/a/b?x=1", data="payload", headers={"X-Custom": "v"})
    assert response.status_code == 200 and response.headers["Content-Type"] == "application/json"
    got = response.json()
    assert (got["method"], got["path"], got["query"], got["body"]) == ("POST", "/a/b", "x=1", "payload")
    assert got["headers"]["x-custom"] == "v"
    assert got["started"] == "hi"  # start(cfg) got the environment
    assert "Calling it with the knative contract" in servers["instance"].stdout


def test_probes_ask_the_instance(servers):
    url = servers["instance"].url
    assert requests.get(url + "/health/readiness").status_code == 200
    assert requests.get(url + "/health/liveness").status_code == 200
    requests.get(url + "/sick")
    sick = requests.get(url + "/health/liveness")
    assert (sick.status_code, sick.text) == (500, "sick")  # func-python's status for a hook that says no


def test_failure_is_plain_500(servers):
    response = requests.get(servers["instance"].url + "/fail")
    assert (response.status_code, response.text) == (500, "Internal Server Error")
    servers["instance"].wait_for_output("internal detail 42")


def test_module_level_handle_streams(servers):
    started = time.monotonic()
    with requests.get(servers["handle"].url + "/", stream=True) as response:
        assert response.status_code == 200
        chunks = response.iter_lines()
        first = next(chunks)
        first_at = time.monotonic() - started
        rest = list(chunks)
    assert first == b"chunk 0" and rest == [b"chunk 1", b"chunk 2", b"done"]
    assert first_at < 0.5  # the first chunk arrived before the handler finished (0.6 s)


def func_python_server(scenario: str, **settings: str) -> Server:
    """The function's ``new`` served by func-python's own server (hypercorn), as ``func run`` serves it."""
    pytest.importorskip("func_python")
    import sys

    port = free_port()
    launcher = "import sys; sys.path.insert(0, sys.argv[1]); from function import new; from func_python.http import serve; serve(new)"
    return Server([sys.executable, "-c", launcher, function_folder(scenario)], base_env(LISTEN_ADDRESS=f"127.0.0.1:{port}", **settings), port)


def test_same_answers_as_func_pythons_own_server(servers):
    """The instance served by func-python itself (hypercorn) and by funcwsgi answer a call alike."""
    own = func_python_server("knative_instance", GREETING="hi")
    try:
        own.wait_ready("/health/readiness")
        for method, path in (("POST", "/a/b?x=1"), ("GET", "/")):
            theirs = requests.request(method, own.url + path, data="payload", headers={"X-Custom": "v"})
            ours = requests.request(method, servers["instance"].url + path, data="payload", headers={"X-Custom": "v"})
            assert ours.status_code == theirs.status_code == 200
            assert ours.headers["Content-Type"] == theirs.headers["Content-Type"]
            strip = ("headers", "calls")
            assert {k: v for k, v in ours.json().items() if k not in strip} == {k: v for k, v in theirs.json().items() if k not in strip}
            assert ours.json()["headers"]["x-custom"] == theirs.json()["headers"]["x-custom"] == "v"
    finally:
        own.stop()


@pytest.fixture(scope="module")
def events():
    pytest.importorskip("cloudevents.core")
    with serving({"events": {"HANDLER_FOLDER": function_folder("knative_cloudevent")}}) as running:
        yield running["events"]


BINARY = {"ce-specversion": "1.0", "ce-id": "e-1", "ce-source": "/test", "ce-type": "order.created", "Content-Type": "application/json"}


def test_cloudevent_function_gets_the_event_and_answers_structured(events):
    response = requests.post(events.url + "/", json={"n": 1}, headers=BINARY)
    assert response.status_code == 200
    assert response.headers["Content-Type"].startswith("application/cloudevents+json")
    body = response.json()
    assert (body["type"], body["source"], body["data"]) == ("reply.structured", "/fn", {"echo": {"n": 1}, "id": "e-1"})


def test_cloudevent_function_binary_reply(events):
    response = requests.post(events.url + "/", json={"n": 2}, headers={**BINARY, "ce-type": "binary.please"})
    assert response.status_code == 202 and response.headers["ce-type"] == "reply.binary"
    assert response.json() == {"got": {"n": 2}}


def test_cloudevent_function_refuses_a_plain_request(events):
    response = requests.post(events.url + "/", data="not an event")
    assert response.status_code == 400


# -- on the event loop, as any async function ---------------------------------------------------
#
# The same func-python instance (tests/functions/knative_loop) served by both event-loop adapters of
# `funcwsgi serve` (gunicorn's edge worker, the default; granian's ASGI) and, for what threads
# give, by `gunicorn funcwsgi:app` with SERVER_EVENT_LOOP=off.

KNATIVE_TIMEOUT = 1.0
KNATIVE_INFLIGHT = 4
TIMED_OUT = (408, "Timeout while processing the function")
CALLER_SPAN = "00f067aa0ba902b7"
ON_LOOP = ("gunicorn", "granian")


def _knative_server(serving_by: str, lifecycle: str, **settings: str) -> Server:
    if serving_by == "threads":
        command, serving = GUNICORN, {"SERVER_EVENT_LOOP": "off"}
    else:
        command, serving = SERVE, {"SERVER_ADAPTER": serving_by}
    return start(
        command,
        "knative_loop",
        ready="/health/readiness",
        SERVER_NUMTHREADS="4",
        SERVER_CALL_TIMEOUT=str(KNATIVE_TIMEOUT),
        SERVER_MAX_INFLIGHT=str(KNATIVE_INFLIGHT),
        SERVER_MAX_BODY_SIZE="1000",
        GREETING="hi",
        LIFECYCLE_LOG=lifecycle,
        **serving,
        **settings,
    )


@pytest.fixture(scope="module", params=[*ON_LOOP, "threads"])
def knative(request, collector, tmp_path_factory):
    lifecycle = str(tmp_path_factory.mktemp("knative") / "lifecycle.log")
    server = _knative_server(
        request.param,
        lifecycle,
        TRACE_COLLECTOR_ENDPOINT=f"http://127.0.0.1:{collector.port}/v1/traces",
        OTEL_BSP_SCHEDULE_DELAY="100",
        SERVER_ACCESS_LOG="true",
    )
    server.serving_by = request.param
    server.lifecycle = lifecycle
    yield server
    server.stop()


def _raw_call(port: int, target: str, timeout: float = 10.0) -> tuple[bytes, bool]:
    """(every byte the server sent for ``GET target``, whether it closed the connection)."""
    import socket

    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
        received = b""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                chunk = sock.recv(65536)
            except TimeoutError:
                return received, False
            if not chunk:
                return received, True
            received += chunk
        return received, False


def test_the_instance_runs_on_the_serving_loop_unless_threads_are_asked_for(knative):
    thread = requests.get(knative.url + "/status").json()["thread"]
    if knative.serving_by == "threads":
        assert thread == "funcwsgi-asgi-loop"  # server threads hand the coroutine to the process's ASGI loop
    else:
        assert thread != "funcwsgi-asgi-loop"  # the server's own loop runs it


@pytest.mark.timing
def test_a_streamed_body_reaches_the_client_as_the_instance_sends_it(knative):
    began = time.monotonic()
    arrived = []
    with requests.get(knative.url + "/stream?n=3&gap=0.3", stream=True, timeout=10) as response:
        assert response.status_code == 200 and "Content-Length" not in response.headers
        for line in response.iter_lines():
            arrived.append((line, time.monotonic() - began))
    assert [line for line, _ in arrived] == [b"piece 0", b"piece 1", b"piece 2", b"end"]
    # Each piece came when it was sent, 0.3 s apart, not all at the end (0.9 s).
    assert arrived[0][1] < 0.25, arrived
    assert arrived[1][1] - arrived[0][1] > 0.2 and arrived[2][1] - arrived[1][1] > 0.2, arrived
    assert arrived[-1][1] >= 0.85, arrived


def test_a_stream_ends_when_the_client_leaves(knative):
    import socket

    with socket.create_connection(("127.0.0.1", knative.port), timeout=5) as sock:
        sock.sendall(b"GET /watch HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Request-Id: knative-watch-1\r\n\r\n")
        received = b""
        while b"data: tick" not in received:  # the head and the first event may come in separate packets
            chunk = sock.recv(65536)
            assert chunk, received
            received += chunk
    # On the loop the server's receive() says http.disconnect, as under uvicorn; on threads the
    # server's failed write closes the body, which cancels the instance's task.
    expected = "http.disconnect" if knative.serving_by in ON_LOOP else "cancelled"
    deadline = time.monotonic() + 5
    while True:
        watchers = requests.get(knative.url + "/status").json()["watchers"]
        ended = [w["ended"] for w in watchers if w["request_id"] == "knative-watch-1"]
        if ended or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert ended == [expected], (watchers, knative.stdout[-3000:])
    if knative.serving_by in ON_LOOP:  # the instance's own http.disconnect cancelled the call
        assert [w["cancelled"] for w in watchers if w["request_id"] == "knative-watch-1"] == [True], watchers


@pytest.mark.timing
def test_the_timeout_cancels_the_instances_coroutine_answers_408_on_time_and_leaves_no_task(knative):
    url = knative.url
    tasks_before = requests.get(url + "/status").json()["tasks"]
    began = time.monotonic()
    response = requests.get(url + "/forever", headers={"X-Request-Id": "knative-timed-1"}, timeout=10)
    took = time.monotonic() - began
    assert (response.status_code, response.text) == TIMED_OUT
    assert KNATIVE_TIMEOUT <= took < KNATIVE_TIMEOUT + 0.5, took
    # The coroutine saw asyncio.CancelledError: on the loop before the 408 went out; on threads the
    # interrupted server thread cancels it within its poll. There a /status call can reach the loop
    # in the same turn as that cancellation and see the task that awaited the app's first message
    # still ending (it ends a turn after the app's task): the count is polled as well.
    deadline = time.monotonic() + (0 if knative.serving_by in ON_LOOP else 2)
    while True:
        seen = requests.get(url + "/status").json()
        cancelled = [entry["request_id"] for entry in seen["cancellations"]][-1:] == ["knative-timed-1"]
        if (cancelled and seen["tasks"] <= tasks_before) or time.monotonic() >= deadline:
            break
        time.sleep(0.05)
    assert cancelled, seen["cancellations"]
    assert seen["tasks"] <= tasks_before, (seen["tasks"], tasks_before)  # the instance's task is gone
    knative.wait_for_output(f"Call timed out after {KNATIVE_TIMEOUT:g}s")


def test_probes_ask_the_instance_and_start_got_the_environment(knative):
    url = knative.url
    assert requests.get(url + "/status").json()["greeting"] == "hi"  # start(cfg) had GREETING
    assert requests.get(url + "/health/readiness").status_code == 200
    assert requests.get(url + "/health/liveness").status_code == 200
    requests.get(url + "/poison")
    try:
        sick = requests.get(url + "/health/liveness")
        assert (sick.status_code, sick.text) == (500, "poisoned")  # as func-python answers
    finally:
        requests.get(url + "/poison?healthy=1")
    assert requests.get(url + "/health/liveness").status_code == 200
    with open(knative.lifecycle) as log:
        assert [line.split()[0] for line in log] == ["start"]  # once, in the one worker


def test_a_failure_before_the_response_is_a_plain_500(knative):
    response = requests.get(knative.url + "/fail", headers={"X-Request-Id": "knative-fail-1"})
    assert (response.status_code, response.text) == (500, "Internal Server Error")
    assert response.headers["X-Request-Id"] == "knative-fail-1"
    logged = knative.wait_for_output("Function failed on GET /fail")
    assert "knative secret token 7431" in logged  # in the log, with its traceback; never to the client


def test_a_failure_after_streaming_began_closes_the_connection(knative):
    received, closed = _raw_call(knative.port, "/fail-midway")
    head, _, body = received.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200"), received
    assert b"first part" in body
    assert closed  # the server dropped the connection ...
    assert not body.endswith(b"0\r\n\r\n")  # ... without the last chunk: the client knows the body is cut short
    assert b"secret" not in received
    knative.wait_for_output("Function failed while streaming GET /fail-midway; closing the connection")


def test_calls_past_the_bound_get_503_with_retry_after_and_probes_still_answer(knative):
    from ..adapters.test_event_loop import _call

    if knative.serving_by == "threads":
        # A thread's call is counted until the thread has handed its connection back, a moment after
        # the client of the previous test had its answer.
        time.sleep(0.2)

    async def scenario():
        slow = [asyncio.ensure_future(_call(knative.port, "/sleep?s=0.8", {})) for _ in range(KNATIVE_INFLIGHT)]
        await asyncio.sleep(0.4)
        extra = await _call(knative.port, "/sleep?s=0", {})
        probe = await _call(knative.port, "/health/liveness", {})
        return await asyncio.gather(*slow), extra, probe

    import asyncio

    slow, extra, probe = asyncio.run(scenario())
    assert [status for status, _, _ in slow] == [200] * KNATIVE_INFLIGHT
    assert (extra[0], extra[1].get("retry-after")) == (503, "1")
    assert probe[0] == 200


def test_the_layers_see_the_call(knative, collector):
    url = knative.url
    # Request id, and the function's own log records carry it.
    response = requests.get(url + "/log", headers={"X-Request-Id": "knative-log-1"})
    assert response.status_code == 200 and response.headers["X-Request-Id"] == "knative-log-1"
    logged = knative.wait_for_output("logged by the knative function")
    (record,) = [json.loads(line) for line in logged.splitlines() if "logged by the knative function" in line]
    assert record["request_id"] == "knative-log-1"
    # The body limit holds before the instance runs; a body within it arrives whole.
    assert requests.post(url + "/status", data=b"x" * 1001).status_code == 413
    assert requests.post(url + "/status", data=b"x" * 700).json()["size"] == 700
    # Metrics count the calls.
    def calls() -> float:
        for line in requests.get(url + "/metrics").text.splitlines():
            if line.startswith('function_calls_total{method="GET"}'):
                return float(line.split()[-1])
        return 0.0

    before = calls()
    requests.get(url + "/stream?n=1&gap=0", headers={"X-Request-Id": "knative-streamed-1"})
    assert calls() == before + 1
    # The access log's record of a streamed call counts what was streamed, once it was.
    logged = knative.wait_for_output('"request_id":"knative-streamed-1"')
    (access,) = [json.loads(line) for line in logged.splitlines() if '"knative-streamed-1"' in line and '"funcwsgi.access"' in line]
    assert (access["status"], access["bytes"], access["path"]) == (200, len(b"piece 0\nend\n"), "/stream")
    # Tracing: the call's span continues the caller's trace, and the instance's own span is its child.
    trace_id = f"{hash(knative.serving_by) & (2**128 - 1):032x}"
    requests.get(url + "/traced", headers={"traceparent": f"00-{trace_id}-{CALLER_SPAN}-01"})
    from .test_kyma_eventing import spans_of

    found = spans_of(collector, trace_id, {"GET /traced", "knative-work"})
    assert set(found) == {"GET /traced", "knative-work"}, collector.stdout[-2000:]
    assert found["GET /traced"]["parentSpanId"] == CALLER_SPAN
    assert found["knative-work"]["parentSpanId"] == found["GET /traced"]["spanId"]


@pytest.mark.parametrize("serving_by", [*ON_LOOP, "threads"])
def test_stop_runs_when_the_server_stops(serving_by, tmp_path):
    import signal

    lifecycle = str(tmp_path / "lifecycle.log")
    server = _knative_server(serving_by, lifecycle)
    try:
        assert requests.get(server.url + "/status").json()["greeting"] == "hi"
        server.signal(signal.SIGTERM)
        assert server.wait_exit() == 0
        with open(lifecycle) as log:
            assert [line.split()[0] for line in log] == ["start", "stop"]
    finally:
        server.stop()


PROBE_ANSWERS = ["true", "false", "none", "truthy", "pair-true", "pair-false", "pair-number", "raises"]


@pytest.fixture(scope="module")
def probes_both_ways():
    """tests/functions/knative_probes served by func-python's own server and by funcwsgi."""
    own = func_python_server("knative_probes")
    try:
        own.wait_ready("/health/readiness")
        with serving({"probes": {"HANDLER_FOLDER": function_folder("knative_probes")}}) as running:
            yield own, running["probes"]
    finally:
        own.stop()


@pytest.mark.parametrize("kind", PROBE_ANSWERS)
@pytest.mark.parametrize("probe", ["alive", "ready"])
def test_probes_answer_as_func_pythons_own_server(probes_both_ways, probe, kind):
    path = "/health/liveness" if probe == "alive" else "/health/readiness"
    answers = []
    for server in probes_both_ways:
        assert requests.get(server.url + f"/say?{probe}={kind}").text == "said"
        answers.append(requests.get(server.url + path, stream=True))
        requests.get(server.url + f"/say?{probe}=true")
    theirs, ours = answers
    assert ours.status_code == theirs.status_code
    assert ours.headers["Content-Type"].split(";")[0] == theirs.headers["Content-Type"] == "text/plain"
    if kind == "raises":
        # func-python's http.py sends "Error: <the exception's text>" (the released 0.8.1 fails sending
        # it as a str and cuts the response); funcwsgi never sends an exception's text.
        assert (ours.status_code, ours.text) == (500, "Internal Server Error")
        assert "password=hunter2" in probes_both_ways[1].wait_for_output("password=hunter2")  # in the log only
    else:
        assert ours.text == theirs.text


def test_probes_without_alive_or_ready_answer_ok_as_func_python(servers):
    for path in ("/health/liveness", "/health/readiness"):
        response = requests.get(servers["handle"].url + path)
        assert (response.status_code, response.text) == (200, "OK")


def test_a_failure_in_handle_is_a_500_without_its_text(probes_both_ways):
    theirs, ours = (requests.get(server.url + "/fail", stream=True) for server in probes_both_ways)
    assert theirs.status_code == ours.status_code == 500
    assert ours.text == "Internal Server Error"
