"""`gunicorn funcwsgi:app`, configured only by environment variables, over a real socket."""

from __future__ import annotations

import signal
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests

from ..support.paths import BIN, function_folder
from ..support.polling import wait_for
from ..support.ports import free_port
from ..support.processes import GUNICORN, SERVE, Server, base_env, process_figures, run_to_exit, start
from ..support.sockets import exchange


@pytest.fixture(scope="module")
def server():
    running = start(GUNICORN, "req_res", SERVER_NUMTHREADS="4", FUNC_RUNTIME="python314")
    yield running
    running.stop()


def test_startup_lines_are_printed_once_before_serving(server):
    folder = function_folder("req_res")
    expected = [
        f"Importing function sources from {folder}/handler.py:main",
        "Tracing disabled: TRACE_COLLECTOR_ENDPOINT is not set",
        "Publisher Proxy not configured: PUBLISHER_PROXY_ADDRESS is not set",
        f"Starting python314 server 127.0.0.1:{server.port}",
    ]
    lines = server.stdout.splitlines()
    assert lines[:4] == expected
    assert sum(line.startswith("Importing function sources") for line in lines) == 1


def test_contract_over_a_socket(server):
    assert requests.get(server.url + "/code").status_code == 201
    assert requests.get(server.url + "/healthz").text == "OK"
    assert requests.get(server.url + "/favicon.ico").status_code == 204
    response = requests.post(server.url + "/json", json={"a": 1})
    assert response.json() == {"ok": True, "echo": {"a": 1}}
    for method in ("GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"):
        response = requests.request(method, server.url + "/any/path")
        assert response.text == f"{method} /any/path"
    head = requests.head(server.url + "/any")
    assert head.status_code == 200 and head.content == b""


def test_header_injection_does_not_reach_the_wire(server):
    raw = exchange(server.port, b"GET /bad-header HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert raw.startswith(b"HTTP/1.1 500")
    assert b"evil" not in raw


def test_failure_is_500_and_the_server_keeps_serving():
    running = start(GUNICORN, "raises")
    try:
        for _ in range(3):
            response = requests.get(running.url + "/")
            assert response.status_code == 500
            assert response.text == "Internal Server Error"
        assert requests.get(running.url + "/healthz").status_code == 200
        output = running.wait_for_output("RuntimeError: secret database password is hunter2")
        assert "Function failed on GET /" in output
    finally:
        running.stop()


def test_streaming_failure_closes_the_connection():
    running = start(GUNICORN, "streaming")
    try:
        assert requests.get(running.url + "/").text == "first\nsecond\n"
        with pytest.raises(requests.exceptions.ChunkedEncodingError):
            requests.get(running.url + "/fail").content  # noqa: B018
        assert requests.get(running.url + "/").status_code == 200
    finally:
        running.stop()


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        pytest.param({"SERVER_PORT": "abc"}, "funcwsgi: error: SERVER_PORT='abc' is invalid: expected an integer from 1 to 65535", id="bad-port"),
        pytest.param({"SERVER_CALL_TIMEOUT": "-1"}, "funcwsgi: error: SERVER_CALL_TIMEOUT='-1' is invalid", id="bad-timeout"),
        pytest.param({"HANDLER_FOLDER": function_folder("no_main")}, "funcwsgi: error: no function 'main' in", id="no-main"),
        pytest.param({"HANDLER_FOLDER": function_folder("syntax_error")}, "funcwsgi: error: syntax error in", id="syntax-error"),
    ],
)
def test_startup_errors_exit_2_with_one_line(settings, message):
    env = base_env(SERVER_HOST="127.0.0.1", SERVER_PORT=str(free_port()), HANDLER_FOLDER=function_folder("hello"))
    env.update(settings)
    result = run_to_exit(GUNICORN, env)
    assert result.returncode == 2, result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("funcwsgi: error:")]
    assert len(errors) == 1 and errors[0].startswith(message), result.stderr
    assert "Traceback" not in result.stderr
    assert "Starting python314 server" not in result.stdout


# -- the production path: lifecycle, timeout, crashes, shutdown (gunicorn.conf.py hooks) ---


def serving(tmp_path, **settings: str) -> Server:
    return start(GUNICORN, "serving", LIFECYCLE_LOG=str(tmp_path / "lifecycle.log"), HEALTH_DIR=str(tmp_path), **settings)


def events(tmp_path) -> list[str]:
    path = tmp_path / "lifecycle.log"
    return path.read_text().splitlines() if path.exists() else []


def test_start_stop_and_408_from_an_installed_package(tmp_path):
    # In a container image there is no gunicorn.conf.py in the working directory:
    # `-c python:funcwsgi.gunicorn_conf` names the module the repository's file imports.
    port = free_port()
    env = base_env(
        HANDLER_FOLDER=function_folder("serving"),
        SERVER_HOST="127.0.0.1",
        SERVER_PORT=str(port),
        SERVER_CALL_TIMEOUT="0.5",
        LIFECYCLE_LOG=str(tmp_path / "lifecycle.log"),
    )
    command = [str(BIN / "gunicorn"), "-c", "python:funcwsgi.gunicorn_conf", "funcwsgi:app"]
    running = Server(command, env, port, cwd=tmp_path)
    try:
        running.wait_ready()
        assert running.stdout.splitlines()[3] == f"Starting python314 server 127.0.0.1:{port}"
        pid = requests.get(running.url + "/pid").json()["pid"]
        assert events(tmp_path) == [f"start {pid}"]
        began = time.monotonic()
        response = requests.get(running.url + "/forever")
        assert (response.status_code, response.text) == (408, "Timeout while processing the function")
        assert time.monotonic() - began < 1.5
        running.signal(signal.SIGTERM)
        assert running.wait_exit(timeout=20) == 0
        assert events(tmp_path) == [f"start {pid}", f"stop {pid}"]
    finally:
        running.stop()


def test_a_worker_that_kills_its_process_is_replaced_and_the_crash_logged(tmp_path):
    running = serving(tmp_path)
    try:
        first = requests.get(running.url + "/pid").json()["pid"]
        with pytest.raises(requests.ConnectionError):
            requests.get(running.url + "/crash")
        second = wait_for(lambda: requests.get(running.url + "/pid", timeout=2).json()["pid"], 10, "a new worker", ignore=(requests.ConnectionError,))
        assert second != first
        assert all(requests.get(running.url + "/").text == "hello" for _ in range(3))
        output = running.wait_for_output(f"Worker process {first} exited; gunicorn starts a new one")
        assert f"Worker (pid:{first}) exited with code 1" in output
        assert events(tmp_path) == [f"start {first}", f"start {second}"]  # start() ran in the new worker too
    finally:
        running.stop()


@pytest.mark.slow("waits out a function's 2-s start() once on each way of running gunicorn")
@pytest.mark.parametrize("command", [SERVE, GUNICORN], ids=["funcwsgi-serve", "gunicorn-conf"])
def test_sigterm_while_a_worker_runs_start_stops_the_server_once_start_returns(tmp_path, command):
    # gunicorn's master sends SIGTERM to every worker when it stops; a worker still in start() kept the
    # master's own handler and lost it, and the master waited graceful_timeout (25 s) to kill it.
    log = tmp_path / "lifecycle.log"
    server = start(command, "slow_start", wait=False, START_SECONDS="2", LIFECYCLE_LOG=str(log))
    try:
        wait_for(lambda: log.exists() and log.read_text().startswith("start "), 20, "the worker in its start()")
        server.signal(signal.SIGTERM)  # to the master only, as Kubernetes stops a container
        status = server.wait_exit(12)
    finally:
        server.stop()
    assert status == 0
    assert [line.split()[0] for line in log.read_text().splitlines()] == ["start", "started", "stop"]


@pytest.mark.slow("calls that never return, one timeout after another, then the worker's threads and memory watched settling")
def test_calls_that_never_return_keep_threads_and_memory_bounded(tmp_path, timing):
    # 2 server threads: at most 4 threads may be stuck in calls that timed out.
    running = serving(tmp_path, SERVER_NUMTHREADS="2", SERVER_CALL_TIMEOUT="0.3")
    try:
        pid = requests.get(running.url + "/pid").json()["pid"]
        before = process_figures(pid)

        def stuck_call() -> None:
            began = time.monotonic()
            response = requests.get(running.url + "/forever", timeout=10)
            if response.status_code == 503:  # every thread was stuck for longer than SERVER_QUEUE_TARGET (the call timeout here)
                assert response.headers["Retry-After"] == "1", response.headers
                return
            assert (response.status_code, response.text) == (408, "Timeout while processing the function")
            took = time.monotonic() - began
            # On time however many calls are stuck. Here a call may first wait in gthread's queue for one of
            # the two threads left free (a full suite run saw 0.6 s), so the slack stays 1 s, but calibrated.
            assert took < 0.3 + timing.slack(1.0), f"{took:.3f} s ({timing})"

        def stuck_calls(count: int, at_once: int = 1) -> None:
            with ThreadPoolExecutor(at_once) as pool:
                for outcome in [pool.submit(stuck_call) for _ in range(count)]:
                    outcome.result()

        stuck_calls(3)
        assert requests.get(running.url + "/healthz").text == "OK"
        assert requests.get(running.url + "/").text == "hello"  # the fourth call thread serves
        after_some = process_figures(pid)
        stuck_calls(12, at_once=2)
        after_many = process_figures(pid)
        # Calls run on gthread's own threads, and each stuck one is made up for, up to
        # 4: at most 2 + 4 of them, where the first call had made only one.
        assert after_many["threads"] <= before["threads"] + 5
        assert after_many["rss_kb"] - after_some["rss_kb"] < 4096
        # Every call thread is stuck now: calls still get their 408 on time, and liveness
        # fails so that the platform restarts the process.
        stuck_calls(1)
        healthz = requests.get(running.url + "/healthz")
        assert (healthz.status_code, healthz.text) == (503, "all 4 call threads are stuck in calls that timed out")
        assert requests.get(running.url + "/health/readiness").status_code == 200
    finally:
        running.stop()


def test_a_failing_start_hook_stops_gunicorn_with_one_line(tmp_path):
    (tmp_path / "fail-start").touch()
    env = base_env(
        HANDLER_FOLDER=function_folder("serving"), SERVER_HOST="127.0.0.1", SERVER_PORT=str(free_port()), HEALTH_DIR=str(tmp_path)
    )
    result = run_to_exit(GUNICORN, env)
    assert result.returncode != 0
    errors = [line for line in result.stderr.splitlines() if line.startswith("funcwsgi: error:")]
    assert errors == [f"funcwsgi: error: start() in {function_folder('serving')}/handler.py raised RuntimeError: cannot reach the database"]

