"""adapters/gunicorn/server_log.py: gunicorn's own lines as funcwsgi's log records, on `funcwsgi serve`."""

from __future__ import annotations

import logging
import signal
from collections.abc import Iterator
from types import SimpleNamespace

import pytest

from funcwsgi.adapters.gunicorn.server_log import ServerLog

from ...support.logs import log_records
from ...support.polling import wait_for
from ...support.processes import FUNCWSGI, children, start


@pytest.fixture
def server_log() -> Iterator[ServerLog]:
    gunicorn_error = logging.getLogger("gunicorn.error")
    level = gunicorn_error.level
    yield ServerLog(SimpleNamespace(loglevel="info"))
    gunicorn_error.setLevel(level)


def test_gunicorns_messages_reach_the_gunicorn_error_logger_at_their_level(server_log, caplog):
    with caplog.at_level(logging.DEBUG):  # the handler takes all: the logger's own level decides
        server_log.info("Booting worker with pid: %s", 42)
        server_log.warning("Worker (pid:%s) was sent SIGKILL!", 42)
        server_log.log("error", "given by name")
        server_log.log(logging.CRITICAL, "given by number")
        server_log.debug("below the level")
    assert [(record.name, record.levelname, record.getMessage()) for record in caplog.records] == [
        ("gunicorn.error", "INFO", "Booting worker with pid: 42"),
        ("gunicorn.error", "WARNING", "Worker (pid:42) was sent SIGKILL!"),
        ("gunicorn.error", "ERROR", "given by name"),
        ("gunicorn.error", "CRITICAL", "given by number"),
    ]


def test_exception_keeps_the_traceback_in_the_record(server_log, caplog):
    with caplog.at_level(logging.INFO):
        try:
            raise RuntimeError("worker failed")
        except RuntimeError:
            server_log.exception("Exception in worker process")
    (record,) = caplog.records
    assert record.levelname == "ERROR" and record.exc_info is not None and record.exc_info[0] is RuntimeError


def test_setup_follows_the_level_of_each_configuration_gunicorn_reloads(server_log):
    """gunicorn calls setup() again with the new configuration when SIGHUP reloads it."""
    gunicorn_error = logging.getLogger("gunicorn.error")
    assert gunicorn_error.level == logging.INFO
    server_log.setup(SimpleNamespace(loglevel="WARNING"))
    assert gunicorn_error.level == logging.WARNING and server_log.cfg.loglevel == "WARNING"
    server_log.setup(SimpleNamespace(loglevel="no such level"))
    assert gunicorn_error.level == logging.INFO  # as gunicorn's own logger reads an unknown name


def test_access_and_the_file_hooks_do_nothing(server_log, caplog):
    with caplog.at_level(logging.DEBUG):
        server_log.access(None, None, {}, None)
        server_log.reopen_files()
        server_log.close_on_exec()
    assert caplog.records == []


def gunicorns(output: str) -> list[dict[str, str]]:
    return [record for record in log_records(output) if record["logger"] == "gunicorn.error"]


@pytest.mark.slow("starts `funcwsgi serve` on gunicorn and stops it")
def test_serve_writes_gunicorns_lines_as_json_records_on_stdout():
    running = start(FUNCWSGI + ["serve"], "req_res", SERVER_ADAPTER="gunicorn")  # returns once the worker answers
    try:
        (worker,) = children(running.process.pid)
        running.process.send_signal(signal.SIGTERM)
        running.process.wait(timeout=15)
        stdout, stderr = running.stdout, running.stderr
    finally:
        running.stop()
    messages = [record["message"] for record in gunicorns(stdout)]
    assert messages[0].startswith("Starting gunicorn ")
    assert f"Listening at: http://127.0.0.1:{running.port} ({running.process.pid})" in messages
    assert f"Booting worker with pid: {worker}" in messages
    assert messages[-1] == "Shutting down: Master"
    assert {record["level"] for record in gunicorns(stdout)} == {"INFO"}
    assert "gunicorn" not in stderr and "Booting worker" not in stderr


@pytest.mark.slow("starts `funcwsgi serve` on gunicorn twice")
def test_text_format_and_log_level_apply_to_gunicorns_lines():
    text = start(FUNCWSGI + ["serve"], "req_res", SERVER_ADAPTER="gunicorn", SERVER_LOG_FORMAT="text")
    try:
        wait_for(lambda: "INFO gunicorn.error: Booting worker with pid: " in text.stdout, 10, "a text line of gunicorn's", show=lambda: text.stdout)
    finally:
        text.stop()
    quiet = start(FUNCWSGI + ["serve"], "req_res", SERVER_ADAPTER="gunicorn", SERVER_LOG_LEVEL="warning")
    try:
        assert gunicorns(quiet.stdout) == []  # the worker answered: its boot line would be written by now
        assert "Booting worker" not in quiet.stdout + quiet.stderr
    finally:
        quiet.stop()
