from __future__ import annotations

import os

from funcwsgi import workers


def test_start_callbacks_run_once_per_process(monkeypatch):
    monkeypatch.setattr(workers, "_starts", [])
    monkeypatch.setattr(workers, "_started_in", None)
    seen = []
    workers.on_worker_start(seen.append)
    workers.on_worker_start(seen.append)  # registering twice keeps one
    workers.start_worker("service")  # type: ignore[arg-type]
    workers.start_worker("service")  # type: ignore[arg-type]
    assert seen == ["service"]
    monkeypatch.setattr(workers, "_started_in", os.getpid() + 1)  # as after a fork
    workers.start_worker("again")  # type: ignore[arg-type]
    assert seen == ["service", "again"]


def test_exit_callbacks_get_the_pid(monkeypatch):
    monkeypatch.setattr(workers, "_exits", [])
    seen = []
    workers.on_worker_exit(seen.append)
    workers.worker_exited(1234)
    assert seen == [1234]
