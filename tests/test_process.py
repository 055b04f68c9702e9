from __future__ import annotations

import gc
import logging
import os

import pytest

from funcwsgi import make_app, process
from funcwsgi.config import Config
from funcwsgi.errors import StartupError

from .support.paths import function_folder


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
