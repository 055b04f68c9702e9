from __future__ import annotations

import ast
import gc
import json
import logging
import os
import subprocess
import sys
from collections.abc import Iterator

import pytest

from funcwsgi import make_app, process
from funcwsgi.config import Config
from funcwsgi.errors import StartupError

from .support.paths import BIN, function_folder
from .support.processes import FUNCWSGI, Server, http_get, start


@pytest.fixture
def fresh(monkeypatch):
    """A process where no worker has started or stopped yet."""
    monkeypatch.setattr(process, "_started_in", None)
    monkeypatch.setattr(process, "_stopped_in", None)
    monkeypatch.setattr(process, "_callbacks_run_in", None)
    monkeypatch.setattr(process, "_starts", [])
    threshold = gc.get_threshold()
    yield
    gc.set_threshold(*threshold)  # starting a process sets the collector's threshold (SERVER_GC_THRESHOLD)


def service_with(tmp_path, monkeypatch, *flags: str):
    log = tmp_path / "process.log"
    monkeypatch.setenv("LIFECYCLE_LOG", str(log))
    monkeypatch.setenv("HEALTH_DIR", str(tmp_path))
    for flag in flags:
        (tmp_path / flag).touch()
    return make_app(environ={}, handler_folder=function_folder("serving")), log


def test_start_runs_once_per_process_after_the_worker_callbacks(fresh, tmp_path, monkeypatch):
    service, log = service_with(tmp_path, monkeypatch)
    order = []
    process.on_worker_start(lambda s: order.append(("worker callback", log.exists())))
    process.start_process(service)
    process.start_process(service)
    assert order == [("worker callback", False)]
    assert log.read_text().splitlines() == [f"start {os.getpid()}"]


def test_stop_runs_once(fresh, tmp_path, monkeypatch):
    service, log = service_with(tmp_path, monkeypatch)
    process.start_process(service)
    process.stop_process(service)
    process.stop_process(service)
    assert log.read_text().splitlines() == [f"start {os.getpid()}", f"stop {os.getpid()}"]


def test_a_raising_start_is_a_startup_error_with_the_users_traceback(fresh, tmp_path, monkeypatch):
    service, _ = service_with(tmp_path, monkeypatch, "fail-start")
    with pytest.raises(StartupError) as caught:
        process.start_process(service)
    assert str(caught.value) == f"start() in {function_folder('serving')}/handler.py raised RuntimeError: cannot reach the database"
    assert "in start" in caught.value.user_traceback
    assert "funcwsgi/process.py" not in caught.value.user_traceback


def test_a_raising_stop_is_logged_not_raised(fresh, caplog):
    def stop():
        raise OSError("disk gone")

    def main(req, res):
        pass

    service = make_app(main, environ={})
    service.loaded.hooks["stop"] = stop
    with caplog.at_level(logging.ERROR):
        process.stop_process(service)
    assert "stop() in" in caplog.text and "disk gone" in caplog.text


def test_async_hooks_are_awaited(fresh):
    ran = []

    async def start():
        ran.append("start")

    def main(req, res):
        pass

    service = make_app(main, environ={})
    service.loaded.hooks["start"] = start
    process.start_process(service)
    assert ran == ["start"]


# -- worker start and exit callbacks


def test_start_callbacks_run_once_per_process(monkeypatch):
    monkeypatch.setattr(process, "_starts", [])
    monkeypatch.setattr(process, "_callbacks_run_in", None)
    seen = []
    process.on_worker_start(seen.append)
    process.on_worker_start(seen.append)  # registering twice keeps one
    process.start_worker("service")  # type: ignore[arg-type]
    process.start_worker("service")  # type: ignore[arg-type]
    assert seen == ["service"]
    monkeypatch.setattr(process, "_callbacks_run_in", os.getpid() + 1)  # as after a fork
    process.start_worker("again")  # type: ignore[arg-type]
    assert seen == ["service", "again"]


def test_exit_callbacks_get_the_pid(monkeypatch):
    monkeypatch.setattr(process, "_exits", [])
    seen = []
    process.on_worker_exit(seen.append)
    process.worker_exited(1234)
    assert seen == [1234]


# -- the start-up lines
def test_lines_with_defaults():
    assert process.startup_lines(Config.from_env({})) == [
        "Importing function sources from /handler.py:main",
        "Tracing disabled: TRACE_COLLECTOR_ENDPOINT is not set",
        "Publisher Proxy not configured: PUBLISHER_PROXY_ADDRESS is not set",
        "Starting python314 server 0.0.0.0:8080",
    ]


def test_lines_with_endpoints():
    config = Config.from_env(
        {
            "HANDLER_FOLDER": "/src",
            "HANDLER_FUNCTION_NAME": "run",
            "TRACE_COLLECTOR_ENDPOINT": "http://collector:4318/v1/traces",
            "PUBLISHER_PROXY_ADDRESS": "http://proxy/publish",
            "FUNC_RUNTIME": "python312",
            "SERVER_PORT": "9000",
        }
    )
    assert process.startup_lines(config) == [
        "Importing function sources from /src/handler.py:run",
        "Tracing configured with endpoint http://collector:4318/v1/traces",
        "Publisher Proxy available on address http://proxy/publish",
        "Starting python312 server 0.0.0.0:9000",
    ]


@pytest.mark.parametrize(("setting", "expected"), [("12345", 12345), ("0", None)])
def test_a_started_process_collects_garbage_at_the_configured_threshold(fresh, setting, expected):
    gc.set_threshold(700, 10, 10)
    service = make_app(environ={"SERVER_GC_THRESHOLD": setting}, handler_folder=function_folder("hello"))
    process.start_process(service)
    assert gc.get_threshold() == (expected or 700, 10, 10)


@pytest.mark.parametrize(("environ", "expected"), [({}, process.LOOP_GC_THRESHOLD), ({"SERVER_GC_THRESHOLD": "10000"}, 10000)])
def test_a_function_on_the_loop_collects_garbage_less_often_unless_the_threshold_is_given(fresh, environ, expected):
    gc.set_threshold(700, 10, 10)
    service = make_app(environ=environ, handler_folder=function_folder("async_fn"))
    assert service.on_loop
    process.start_process(service)
    assert gc.get_threshold() == (expected, 10, 10)


# -- the collector held back while a server starts ------------------------------------------


@pytest.fixture
def thresholds() -> Iterator[None]:
    """Python's thresholds in each test, nothing held or frozen after it."""
    before = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield
    process.resume_collector()
    gc.unfreeze()
    gc.set_threshold(*before)


def test_holding_the_collector_raises_the_youngest_threshold_and_resuming_gives_the_old_ones_back(thresholds):
    process.hold_collector()
    assert process.collector_held()
    assert gc.get_threshold() == (process.HELD_GC_THRESHOLD, 10, 10)
    process.resume_collector()
    assert not process.collector_held()
    assert gc.get_threshold() == (700, 10, 10)


def test_resuming_the_collector_freezes_what_the_start_up_made(thresholds):
    process.hold_collector()
    made_while_held = [[] for _ in range(100)]
    process.resume_collector()
    assert gc.get_freeze_count() >= len(made_while_held)
    assert gc.get_count()[0] < 100  # no collection over the start-up's objects due at the next allocation


def test_a_second_hold_keeps_the_thresholds_from_before_the_first(thresholds):
    process.hold_collector()
    process.hold_collector()
    process.resume_collector()
    assert gc.get_threshold() == (700, 10, 10)


def test_resuming_without_a_hold_changes_nothing(thresholds):
    gc.set_threshold(1234, 5, 6)
    process.resume_collector()
    assert gc.get_threshold() == (1234, 5, 6)
    assert gc.get_freeze_count() == 0


def test_a_threshold_above_the_held_one_is_kept(thresholds):
    gc.set_threshold(process.HELD_GC_THRESHOLD * 10, 10, 10)
    process.hold_collector()
    assert gc.get_threshold()[0] == process.HELD_GC_THRESHOLD * 10
    process.resume_collector()
    assert gc.get_threshold() == (process.HELD_GC_THRESHOLD * 10, 10, 10)


def test_gunicorns_master_gives_the_collector_back_before_it_forks(thresholds):
    """`funcwsgi serve` holds it in the master; the workers inherit what the master has when it forks."""
    from funcwsgi.adapters.gunicorn import gunicorn_settings

    process.hold_collector()
    gunicorn_settings(Config.from_env({}))["when_ready"](None)
    assert not process.collector_held()
    assert gc.get_threshold() == (700, 10, 10)


def test_serve_holds_the_collector_before_the_settings_the_request_path_and_the_server_are_imported():
    """`funcwsgi serve` holds it first thing in its command: what comes before is the CLI's entry and this module."""
    before_the_hold = "import sys, funcwsgi.cli, funcwsgi.cli.commands.serve; print(sorted(sys.modules))"
    result = subprocess.run([sys.executable, "-c", before_the_hold], capture_output=True, text=True, timeout=60, check=True)
    imported = ast.literal_eval(result.stdout)
    assert "funcwsgi.process" in imported
    assert [name for name in ("funcwsgi.config", "funcwsgi.application", "funcwsgi.stack", "gunicorn", "asyncio") if name in imported] == []


#: gunicorn with funcwsgi's configuration module, which holds the collector back in the master too.
CONFIGURED_GUNICORN = [str(BIN / "gunicorn"), "-c", "python:funcwsgi.gunicorn_conf", "funcwsgi:app"]


@pytest.fixture(scope="module", params=["gunicorn", "granian", "waitress", "werkzeug", "gunicorn -c funcwsgi.gunicorn_conf"])
def gc_reporting(request: pytest.FixtureRequest) -> Iterator[Server]:
    command = CONFIGURED_GUNICORN if request.param.startswith("gunicorn -c") else FUNCWSGI + ["serve"]
    # 0 keeps Python's thresholds: a process that never gave the collector back would show the held one.
    with start(command, "gc_state", SERVER_ADAPTER=request.param.split()[0], SERVER_GC_THRESHOLD="0") as server:
        yield server


@pytest.mark.slow("starts a real server on each adapter")
def test_a_serving_process_has_the_collector_back(gc_reporting):
    """`funcwsgi serve` held the collector back while it started; the process that answers has it back."""
    status, body = http_get(gc_reporting.host, gc_reporting.port, "/")
    assert status == 200
    state = json.loads(body)
    assert state["enabled"]
    pythons_own = subprocess.run([sys.executable, "-c", "import gc; print(list(gc.get_threshold()))"], capture_output=True, text=True, check=True)
    assert state["threshold"] == json.loads(pythons_own.stdout)  # what SERVER_GC_THRESHOLD=0 keeps
    assert state["frozen"] > 0  # what the start-up made is out of the collections' sight
