"""The same contract on every server: `funcwsgi serve` as a real subprocess, configured by environment variables only.

Each adapter's server starts once for the module (the `served` fixture);
the SIGTERM and start-up failure tests start their own.
"""

from __future__ import annotations

import re
import signal
import sys
import threading
import time
from pathlib import Path

import pytest
import requests

from funcwsgi.adapters import HTTP_ADAPTERS

from ..support.paths import function_folder
from ..support.polling import wait_for
from ..support.ports import free_port
from ..support.processes import SERVE, ServedFunction, base_env, run_to_exit
from ..support.processes import start as serve

# `python -m funcwsgi` with no arguments serves too; one adapter is started that way.
SERVE_COMMANDS = {"waitress": [sys.executable, "-m", "funcwsgi"]}
CALL_TIMEOUT = 0.5
MAX_BODY = 1024
TIMEOUT_BODY = "Timeout while processing the function"
#: The event-loop path: the serving function's async twin, on the adapters that serve it on a loop.
LOOP_PATHS = {"gunicorn-loop": "gunicorn", "granian-loop": "granian"}
#: Every way of serving the contract holds for: each HTTP adapter, and each event-loop path.
SERVED_BY = [*HTTP_ADAPTERS, *LOOP_PATHS]
#: The paths a platform probes; none of their answers may come from a cache.
PROBES = ("/healthz", "/health/readiness", "/health/liveness")


#: The serving function's module (tests/functions/serving): its async twin on the event-loop paths.
def module_of(adapter: str) -> str:
    return "handler_async" if adapter in LOOP_PATHS else "handler"


def start(adapter: str, folder: Path, *, bind: str = "127.0.0.1", connect: str = "127.0.0.1", **settings: str) -> ServedFunction:
    defaults = {
        "SERVER_ADAPTER": LOOP_PATHS.get(adapter, adapter),
        "SERVER_HOST": bind,
        "SERVER_NUMTHREADS": "4",
        "SERVER_CALL_TIMEOUT": str(CALL_TIMEOUT),
        "SERVER_MAX_BODY_SIZE": str(MAX_BODY),
        "LIFECYCLE_LOG": str(folder / "lifecycle.log"),
        "HEALTH_DIR": str(folder),
        **({} if "HANDLER_FOLDER" in settings else {"HANDLER_MODULE_NAME": module_of(adapter)}),
    }
    return ServedFunction(adapter, serve(SERVE_COMMANDS.get(adapter, SERVE), "serving", host=connect, **{**defaults, **settings}), folder)


@pytest.fixture(scope="module", params=SERVED_BY)
def served(request, tmp_path_factory):
    running = start(request.param, tmp_path_factory.mktemp(request.param))
    yield running
    running.server.stop()


def test_startup_lines_are_printed_once_before_serving(served):
    folder = function_folder("serving")
    expected = [
        f"Importing function sources from {folder}/{module_of(served.adapter)}.py:main",
        "Tracing disabled: TRACE_COLLECTOR_ENDPOINT is not set",
        "Publisher Proxy not configured: PUBLISHER_PROXY_ADDRESS is not set",
        f"Starting python314 server 127.0.0.1:{served.server.port}",
    ]
    lines = served.server.stdout.splitlines()
    assert lines[:4] == expected
    assert sum(line.startswith("Importing function sources") for line in lines) == 1


def test_calls_answer_200_and_failures_500(served):
    assert requests.get(served.url + "/").text == "hello"
    failed = requests.get(served.url + "/fail")
    assert (failed.status_code, failed.text) == (500, "Internal Server Error")
    assert "hunter2" not in failed.text
    head = requests.head(served.url + "/")
    assert head.status_code == 200 and head.content == b""
    assert requests.get(served.url + "/").status_code == 200


@pytest.mark.parametrize("path", ["/forever", "/spin"], ids=["blocked-in-sleep", "python-loop"])
def test_a_call_past_its_deadline_gets_408_on_time(served, path, timing):
    """0.2 s after the deadline on an idle machine, scaled by the machine's calibration (tests/support/calibration.py).

    Mutation caught: the watchdog answering 0.4 s past the deadline (``call.deadline + 0.4 <= now``)
    on the gunicorn adapter, the hand-off waiting three times the deadline on the others.
    """
    began = time.monotonic()
    response = requests.get(served.url + path, timeout=10)
    took = time.monotonic() - began
    assert (response.status_code, response.text) == (408, TIMEOUT_BODY)
    assert CALL_TIMEOUT <= took < CALL_TIMEOUT + timing.slack(0.2), f"{took:.3f} s ({timing})"
    assert requests.get(served.url + "/").text == "hello"


def test_the_function_sees_its_request_and_its_thread_locals_under_the_timeout(served):
    seen = [requests.get(served.url + "/context").json() for _ in range(20)]
    assert {answer["path"] for answer in seen} == {"/context"}
    counts_by_thread: dict[int, list[int]] = {}
    for answer in seen:
        counts_by_thread.setdefault(answer["thread"], []).append(answer["thread_calls"])
    # Threads are long-lived, as a server's are: what one call keeps in a threading.local
    # is there for the next call on that thread. (Under gunicorn the calls run on
    # gthread's own threads, any of which may take the next one.)
    for counts in counts_by_thread.values():
        assert counts == list(range(counts[0], counts[0] + len(counts)))
    assert max(len(counts) for counts in counts_by_thread.values()) >= 2


@pytest.mark.parametrize(
    ("size", "chunked", "status"),
    [
        pytest.param(MAX_BODY, False, 200, id="at-the-limit"),
        pytest.param(MAX_BODY + 1, False, 413, id="content-length-over"),
        pytest.param(MAX_BODY, True, 200, id="chunked-at-the-limit"),
        pytest.param(4 * MAX_BODY, True, 413, id="chunked-over"),
    ],
)
def test_request_bodies_over_the_limit_get_413(served, size, chunked, status):
    body = b"x" * size

    def chunks():
        for start in range(0, size, 256):
            yield body[start : start + 256]

    response = requests.post(served.url + "/size", data=chunks() if chunked else body, timeout=10)
    assert response.status_code == status
    if status == 200:
        assert response.json() == {"size": size}
    else:
        assert response.text.startswith("Request Entity Too Large")


def probe_answers(url: str) -> list[tuple[str, str, int, str | None]]:
    """Method, path, status and ``Cache-Control`` of a GET and a HEAD on each probe path."""
    answers = []
    for method in ("GET", "HEAD"):
        for path in PROBES:
            response = requests.request(method, url + path, timeout=10)
            answers.append((method, path, response.status_code, response.headers.get("Cache-Control")))
    return answers


def test_reserved_routes_and_health_hooks(served):
    assert (requests.get(served.url + "/healthz").text, requests.get(served.url + "/healthz").status_code) == ("OK", 200)
    assert requests.get(served.url + "/favicon.ico").status_code == 204
    for path in ("/health/readiness", "/health/liveness"):
        assert requests.get(served.url + path).text == "OK"
    assert {answer[2:] for answer in probe_answers(served.url)} == {(200, "no-store")}
    not_ready = served.folder / "not-ready"
    not_ready.touch()
    try:
        response = requests.get(served.url + "/health/readiness")
        assert (response.status_code, response.text) == (503, "warming up the cache")
        assert response.headers.get("Cache-Control") == "no-store"
        assert requests.get(served.url + "/healthz").status_code == 200
    finally:
        not_ready.unlink()
    not_alive = served.folder / "not-alive"
    not_alive.touch()
    try:
        for path in ("/health/liveness", "/healthz"):
            response = requests.get(served.url + path)
            assert (response.status_code, response.text) == (503, "alive() returned False")
            assert response.headers.get("Cache-Control") == "no-store"
    finally:
        not_alive.unlink()
    assert requests.get(served.url + "/health/readiness").status_code == 200


@pytest.fixture(scope="module", params=SERVED_BY)
def served_without_checks(request, tmp_path_factory):
    """A function with no ready()/alive() hooks, and no layer or loop watch adding a liveness check."""
    folder = function_folder("async_fn" if request.param in LOOP_PATHS else "hello")
    running = start(
        request.param, tmp_path_factory.mktemp(request.param), HANDLER_FOLDER=str(folder), SERVER_CALL_TIMEOUT="0", SERVER_LOOP_BLOCKED_SECONDS="0"
    )
    yield running
    running.server.stop()


def test_probes_are_never_answered_from_a_cache_without_hooks_either(served_without_checks):
    """``/healthz`` with nothing to check is answered by the reserved routes' fixed reply, not a HealthCheck.

    Mutation caught: that reply made without ``Cache-Control: no-store`` (as it was).
    """
    answers = probe_answers(served_without_checks.url)
    assert [answer for answer in answers if answer[2:] != (200, "no-store")] == []


def _calls_counted(url: str, method: str) -> float:
    """``function_calls_total{method=...}`` as the server's /metrics reports it."""
    found = re.search(rf'^function_calls_total{{method="{method}"}} (\S+)$', requests.get(url + "/metrics").text, re.M)
    return float(found.group(1)) if found else 0.0


def test_a_streamed_body_is_closed_and_its_call_counted(served):
    """The server closes the body it was given, so every layer's end of call runs.

    The function's body records its own close(), and ``function_calls_total``
    counts a streamed call only when the server closes the stack's body: the
    count is the strict check, since garbage collection of a dropped body can
    still close the function's (the response's generator closes it when
    collected) but never counts the call. Mutation caught: the werkzeug
    adapter handing its server ``(chunk for chunk in tracked(environ, start_response))``,
    which drops ``close()`` (the call is never counted; found by no test before).
    """
    before = _calls_counted(served.url, "POST")
    tag = f"{served.adapter}-{time.monotonic_ns()}"
    response = requests.post(served.url + f"/stream?tag={tag}", timeout=10)
    assert (response.status_code, response.text) == (200, "one,two,three")
    wait_for(lambda: any(event.startswith(f"closed {tag} ") for event in served.events()), timeout=5, what=f"the body of call {tag} closed")
    wait_for(lambda: _calls_counted(served.url, "POST") == before + 1, timeout=5, what="the streamed call counted")


def test_start_hook_ran_once_in_the_serving_process_before_it_served(served):
    pid = requests.get(served.url + "/pid").json()["pid"]
    events = served.events()
    assert events.count(f"start {pid}") == 1
    assert sum(event.startswith("start ") for event in events) == 1


@pytest.mark.parametrize("adapter", SERVED_BY)
def test_sigterm_lets_a_call_in_flight_finish_then_runs_stop_and_exits_0(adapter, tmp_path):
    # Bound to every IPv6 address ("::"), reached over IPv6 loopback.
    running = start(adapter, tmp_path, bind="::", connect="::1", SERVER_CALL_TIMEOUT="30")
    try:
        result: dict[str, requests.Response] = {}
        slow = threading.Thread(target=lambda: result.setdefault("slow", requests.get(running.url + "/sleep?s=0.6", timeout=20)))
        slow.start()
        wait_for(lambda: any(event.startswith("sleeping ") for event in running.events()))
        running.server.signal(signal.SIGTERM)
        running.server.wait_refusing()
        slow.join(timeout=20)
        assert (result["slow"].status_code, result["slow"].text) == (200, "slept")
        assert running.server.wait_exit(timeout=20) == 0
        assert any(event.startswith("stop ") for event in running.events()), running.events()
    finally:
        running.server.stop()


@pytest.mark.parametrize("adapter", SERVED_BY)
def test_a_failing_start_hook_stops_start_up_with_one_line(adapter, tmp_path):
    (tmp_path / "fail-start").touch()
    port = free_port()
    env = base_env(
        SERVER_ADAPTER=LOOP_PATHS.get(adapter, adapter),
        HANDLER_FOLDER=function_folder("serving"),
        HANDLER_MODULE_NAME=module_of(adapter),
        SERVER_HOST="127.0.0.1",
        SERVER_PORT=str(port),
        HEALTH_DIR=str(tmp_path),
    )
    result = run_to_exit(SERVE, env, timeout=30)
    assert result.returncode != 0
    errors = [line for line in result.stderr.splitlines() if line.startswith("funcwsgi: error:")]
    assert len(errors) == 1, result.stderr
    assert errors[0].startswith("funcwsgi: error: start() in ") and errors[0].endswith("raised RuntimeError: cannot reach the database")


def test_an_unknown_adapter_exits_2_listing_the_valid_names():
    env = base_env(SERVER_ADAPTER="tomcat", HANDLER_FOLDER=function_folder("hello"), SERVER_PORT=str(free_port()))
    result = run_to_exit(SERVE, env)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "funcwsgi: error: SERVER_ADAPTER='tomcat' is invalid: expected one of gunicorn, waitress, werkzeug, granian, kafka"
    ]
    assert "Importing function sources" not in result.stdout


@pytest.mark.parametrize("adapter", ["waitress", "granian"])
def test_a_missing_optional_server_names_the_extra_to_install(adapter):
    # The server is made unimportable for this one process, as if it were not installed.
    code = f"import sys; sys.modules[{adapter!r}] = None; from funcwsgi.cli import main; sys.exit(main(['serve']))"
    env = base_env(SERVER_ADAPTER=adapter, HANDLER_FOLDER=function_folder("hello"), SERVER_PORT=str(free_port()))
    result = run_to_exit([sys.executable, "-c", code], env)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"funcwsgi: error: SERVER_ADAPTER={adapter!r} needs the {adapter} server, which is not installed: pip install 'funcwsgi[{adapter}]'"
    ]

