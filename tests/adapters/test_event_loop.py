"""What only the event-loop path has: many calls per worker, cancelling timeouts, a watched loop, a bound on calls.

Each loop server (gunicorn's edge worker, granian's ASGI) serves the
async twin of the serving function as a real subprocess; the many
concurrent calls come from one asyncio client with a connection per call.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator

import pytest
import requests

from ..conformance.kit import serve as kit_serve
from ..conformance.launchers import Launcher, local_launchers
from ..support.logs import log_records
from ..support.paths import function_folder
from ..support.ports import free_port
from ..support.processes import GUNICORN, SERVE, Server, base_env, start
from ..support.receivers import EventReceiver

LOOP_ADAPTERS = ("gunicorn", "granian")
CALL_TIMEOUT = 0.5
#: The module's server lets the 2-second calls finish.
LONG_CALL_TIMEOUT = 3


def serve(adapter: str, **settings: str) -> Server:
    module = {} if "HANDLER_FOLDER" in settings else {"HANDLER_MODULE_NAME": "handler_async"}  # the serving function's async twin
    return start(SERVE, "serving", **{**module, "SERVER_ADAPTER": adapter, "SERVER_CALL_TIMEOUT": str(CALL_TIMEOUT), **settings})


async def _call(port: int, target: str, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        lines = [f"GET {target} HTTP/1.1", f"Host: 127.0.0.1:{port}", "Connection: close", *(f"{k}: {v}" for k, v in headers.items())]
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode())
        await writer.drain()
        raw = await reader.read()
    finally:
        writer.close()
    head, _, body = raw.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    found = {}
    for line in header_lines:
        name, _, value = line.partition(":")
        found[name.strip().lower()] = value.strip()
    return int(status_line.split()[1]), found, body


def many_calls(port: int, calls: list[tuple[str, dict[str, str]]], timeout: float = 60) -> list[tuple[int, dict[str, str], bytes]]:
    """Every call at once, each on a connection of its own."""

    async def all_of_them() -> list[tuple[int, dict[str, str], bytes]]:
        return await asyncio.wait_for(asyncio.gather(*(_call(port, target, headers) for target, headers in calls)), timeout)

    return asyncio.run(all_of_them())


@pytest.fixture(scope="module", params=LOOP_ADAPTERS)
def loop_server(request) -> Iterator[tuple[Server, EventReceiver]]:
    events = EventReceiver()
    # Tracing on, towards a port nobody listens on: spans are made (and their export fails quietly).
    server = serve(
        request.param,
        # 2000 calls at once, each on a connection of its own: both bounds (1000 each by default) above that.
        SERVER_MAX_INFLIGHT="3000",
        SERVER_MAX_CONNECTIONS="3000",
        SERVER_CALL_TIMEOUT=str(LONG_CALL_TIMEOUT),
        PUBLISHER_PROXY_ADDRESS=events.url + "/ok",
        TRACE_COLLECTOR_ENDPOINT=f"http://127.0.0.1:{free_port()}/v1/traces",
        # Each export gives up within half a second: at exit the spans still batched are exported
        # with retries for up to 10 s a batch by default, which made stopping the server take 12-20 s.
        OTEL_EXPORTER_OTLP_TRACES_TIMEOUT="0.5",
    )
    yield server, events
    server.stop()
    events.stop()


@pytest.mark.slow("2,000 calls held open at once on one worker")
def test_one_worker_holds_two_thousand_awaiting_calls_at_once(loop_server):
    server, _ = loop_server
    began = time.monotonic()
    answers = many_calls(server.port, [("/sleep?s=2", {})] * 2000)
    took = time.monotonic() - began
    assert [status for status, _, _ in answers] == [200] * 2000
    assert {body for _, _, body in answers} == {b"slept"}
    # 2000 calls of 2 s each, one worker: only when they all wait at once is this under 2000 x 2 s / 50 threads = 80 s.
    assert took < 2 + 15, took


def test_interleaved_calls_each_see_their_own_request_id_span_log_ids_and_event(loop_server):
    server, events = loop_server
    count = 300
    before = len(events.received)
    calls = []
    for n in range(count):
        trace_id = f"{n + 1:032x}"
        calls.append(
            (f"/observed?n={n}", {"X-Request-Id": f"call-{n}", "traceparent": f"00-{trace_id}-{n + 1:016x}-01"})
        )
    answers = many_calls(server.port, calls)
    for n, (status, headers, body) in enumerate(answers):
        assert status == 200, body
        seen = json.loads(body)
        assert seen == {"n": str(n), "request_id": f"call-{n}", "trace_id": f"{n + 1:032x}"}
        assert headers["x-request-id"] == f"call-{n}"
    # Each call's log record carries that call's id.
    deadline = time.monotonic() + 10
    while True:
        records = [record for record in log_records(server.stdout) if record.get("message", "").startswith("call ")]
        if len(records) >= count or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    logged = {record["message"]: record.get("request_id") for record in records if record.get("logger") == "function"}
    assert len(logged) == count
    assert all(request_id == f"call-{message.split()[1]}" for message, request_id in logged.items()), logged
    # Each call's event arrived, carrying that call's trace.
    received = events.wait_for(before + count)[before:]
    assert len(received) == count
    for event in received:
        n = int(json.loads(event.body)["data"]["n"])
        assert event.headers["traceparent"].split("-")[1] == f"{n + 1:032x}"


@pytest.mark.slow("waits out two call timeouts, one per way a coroutine can hang")
def test_the_timeout_cancels_the_coroutine_answers_408_on_time_and_leaves_no_task(loop_server):
    server, _ = loop_server
    url = server.url
    tasks_before = requests.get(url + "/cancelled").json()["tasks"]
    for path in ("/forever", "/spin"):
        began = time.monotonic()
        response = requests.get(url + path, headers={"X-Request-Id": f"timed-{path[1:]}"}, timeout=10)
        took = time.monotonic() - began
        assert (response.status_code, response.text) == (408, "Timeout while processing the function")
        assert LONG_CALL_TIMEOUT <= took < LONG_CALL_TIMEOUT + 0.5, took
    seen = requests.get(url + "/cancelled").json()
    # The function saw asyncio.CancelledError in each call, and no task of theirs is left.
    assert [(entry["path"], entry["request_id"]) for entry in seen["cancellations"][-2:]] == [
        ("/forever", "timed-forever"),
        ("/spin", "timed-spin"),
    ]
    assert seen["tasks"] <= tasks_before
    assert f"Call timed out after {LONG_CALL_TIMEOUT}s (the coroutine was cancelled at the deadline): GET /forever" in server.stdout


@pytest.mark.parametrize("adapter", LOOP_ADAPTERS)
def test_a_blocked_loop_is_logged_with_the_function_name_and_fails_liveness(adapter):
    # The call blocks for 1 s: past the module's 0.5 s call timeout it would be answered 408
    # (one decision per call, docs/servers.md#one-answer-decided-once), so this server allows it.
    server = serve(adapter, SERVER_LOOP_BLOCKED_SECONDS="0.3", SERVER_CALL_TIMEOUT="10")
    try:
        assert requests.get(server.url + "/health/liveness").status_code == 200
        assert requests.get(server.url + "/block?s=1", timeout=10).text == "blocked the loop"
        liveness = requests.get(server.url + "/health/liveness")
        assert liveness.status_code == 503
        assert liveness.text.startswith("the event loop was blocked for over 0.3s by main() in ")
        assert "asyncio.to_thread" in liveness.text
        assert requests.get(server.url + "/healthz").status_code == 503
        logged = server.wait_for_output("Event loop blocked")
        assert "in main()" in logged and "time.sleep" in logged  # the loop thread's stack, down to the blocking line
    finally:
        server.stop()


@pytest.mark.parametrize("adapter", LOOP_ADAPTERS)
def test_calls_past_the_bound_get_503_with_retry_after_and_probes_still_answer(adapter):
    server = serve(adapter, SERVER_MAX_INFLIGHT="5", SERVER_CALL_TIMEOUT="10")
    try:

        async def scenario() -> tuple[list[tuple[int, dict[str, str], bytes]], int]:
            slow = [asyncio.ensure_future(_call(server.port, "/sleep?s=1.5", {})) for _ in range(5)]
            await asyncio.sleep(0.7)  # the five are in flight
            extra = await asyncio.gather(*(_call(server.port, "/sleep?s=0.1", {}) for _ in range(4)))
            probe = await _call(server.port, "/health/liveness", {})
            return [*await asyncio.gather(*slow), *extra], probe[0]

        answers, probe_status = asyncio.run(scenario())
        assert [status for status, _, _ in answers[:5]] == [200] * 5
        for status, headers, body in answers[5:]:
            # The threads' refusal, word for word (funcwsgi/replies.py BUSY), and closed after it.
            assert (status, headers.get("retry-after"), body) == (503, "1", b"the function is busy; retry later")
            assert headers.get("connection") == "close"
        assert probe_status == 200
        exposition = requests.get(server.url + "/metrics").text
        assert "function_rejected_total 4.0" in exposition, [line for line in exposition.splitlines() if "rejected" in line]
        assert requests.get(server.url + "/sleep?s=0").text == "slept"  # the bound frees up again
    finally:
        server.stop()


def test_gunicorn_funcwsgi_app_serves_an_async_function_on_the_loop_worker(tmp_path):
    from ..support.paths import REPO

    port = free_port()
    env = base_env(HANDLER_FOLDER=function_folder("serving"), HANDLER_MODULE_NAME="handler_async", SERVER_HOST="127.0.0.1", SERVER_PORT=str(port))
    server = Server(GUNICORN, env, port, cwd=REPO)
    try:
        server.wait_ready()
        answers = many_calls(port, [("/sleep?s=1", {})] * 200)
        assert [status for status, _, _ in answers] == [200] * 200
        assert "Using worker: funcwsgi.adapters.gunicorn.worker.HttpEdgeWorker" in server.stderr + server.stdout
    finally:
        server.stop()


@pytest.mark.parametrize("adapter", LOOP_ADAPTERS)
def test_an_asgi_app_function_is_served_on_the_loop_through_the_same_stack(adapter):
    server = serve(adapter, HANDLER_FOLDER=function_folder("asgi_handle"), HANDLER_FUNCTION_NAME="handle")
    try:
        response = requests.post(server.url + "/orders/7", data=b"payload", headers={"X-Request-Id": "asgi-1"})
        assert (response.status_code, response.text) == (201, "got payload via POST")
        assert response.headers["X-Seen-Path"] == "/orders/7"
        assert response.headers["X-Request-Id"] == "asgi-1"  # the stack's layers saw the call
        assert requests.get(server.url + "/health/liveness").text == "OK"
    finally:
        server.stop()


def test_an_asgi_app_function_is_served_on_threads_too():
    from funcwsgi.testing import FunctionClient

    client = FunctionClient(function_folder("asgi_handle"), name="handle")
    response = client.post("/x", data=b"body")
    assert (response.status_code, response.get_data(as_text=True)) == (201, "got body via POST")


def _kit_loop_launchers() -> list[Launcher]:
    return [launcher for launcher in local_launchers() if launcher.language == "python-async"]


@pytest.mark.parametrize("launcher", _kit_loop_launchers(), ids=lambda launcher: launcher.name)
def test_the_conformance_kits_loop_launchers_serve_on_the_event_loop(launcher):
    """The kit's loop launchers (tests/conformance/launchers.py) really exercise the loop path, not threads.

    Launched as the kit launches them (its settings: SERVER_NUMTHREADS=8), 100 calls that
    each await 1 s finish together; on 8 threads they would take over 12 s.
    """
    assert {launcher.name for launcher in _kit_loop_launchers()} == {"funcwsgi-loop", "funcwsgi-loop-granian", "funcwsgi-loop-gunicorn-app", "funcwsgi-loop-h2c"}
    with kit_serve(launcher, "main", {}) as runtime:
        began = time.monotonic()
        answers = many_calls(runtime.process.port, [("/sleep?seconds=1", {})] * 100)
        took = time.monotonic() - began
    assert [(status, body) for status, _, body in answers] == [(200, b"slept")] * 100
    assert took < 1 + 5, took
