from __future__ import annotations

import logging
import os

import pytest

from funcwsgi import lifecycle, make_app, workers
from funcwsgi.errors import StartupError

from .conftest import function_folder


@pytest.fixture
def fresh(monkeypatch):
    """A process where no worker has started or stopped yet."""
    monkeypatch.setattr(lifecycle, "_started_in", None)
    monkeypatch.setattr(lifecycle, "_stopped_in", None)
    monkeypatch.setattr(workers, "_started_in", None)
    monkeypatch.setattr(workers, "_starts", [])


def service_with(tmp_path, monkeypatch, *flags: str):
    log = tmp_path / "lifecycle.log"
    monkeypatch.setenv("LIFECYCLE_LOG", str(log))
    monkeypatch.setenv("HEALTH_DIR", str(tmp_path))
    for flag in flags:
        (tmp_path / flag).touch()
    return make_app(environ={}, handler_folder=function_folder("serving")), log


def test_start_runs_once_per_process_after_the_worker_callbacks(fresh, tmp_path, monkeypatch):
    service, log = service_with(tmp_path, monkeypatch)
    order = []
    workers.on_worker_start(lambda s: order.append(("worker callback", log.exists())))
    lifecycle.start_process(service)
    lifecycle.start_process(service)
    assert order == [("worker callback", False)]
    assert log.read_text().splitlines() == [f"start {os.getpid()}"]


def test_stop_runs_once(fresh, tmp_path, monkeypatch):
    service, log = service_with(tmp_path, monkeypatch)
    lifecycle.start_process(service)
    lifecycle.stop_process(service)
    lifecycle.stop_process(service)
    assert log.read_text().splitlines() == [f"start {os.getpid()}", f"stop {os.getpid()}"]


def test_a_raising_start_is_a_startup_error_with_the_users_traceback(fresh, tmp_path, monkeypatch):
    service, _ = service_with(tmp_path, monkeypatch, "fail-start")
    with pytest.raises(StartupError) as caught:
        lifecycle.start_process(service)
    assert str(caught.value) == f"start() in {function_folder('serving')}/handler.py raised RuntimeError: cannot reach the database"
    assert "in start" in caught.value.user_traceback
    assert "funcwsgi/lifecycle.py" not in caught.value.user_traceback


def test_a_raising_stop_is_logged_not_raised(fresh, caplog):
    def stop():
        raise OSError("disk gone")

    def main(req, res):
        pass

    service = make_app(main, environ={})
    service.loaded.hooks["stop"] = stop
    with caplog.at_level(logging.ERROR):
        lifecycle.stop_process(service)
    assert "stop() in" in caplog.text and "disk gone" in caplog.text


def test_async_hooks_are_awaited(fresh):
    ran = []

    async def start():
        ran.append("start")

    def main(req, res):
        pass

    service = make_app(main, environ={})
    service.loaded.hooks["start"] = start
    lifecycle.start_process(service)
    assert ran == ["start"]
