"""waitress's stop, bounded by SERVER_GRACEFUL_TIMEOUT: a stop() that never returns, a thread start() left
running, a SIGTERM while start() runs (and a start() that outlasts the timeout after it)."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from ..support.polling import wait_for
from ..support.processes import SERVE, Server
from ..support.processes import start as serve

pytestmark = pytest.mark.slow("each test waits out a 2-s SERVER_GRACEFUL_TIMEOUT once")

GRACE = 2.0
#: How long after GRACE the process may take to end (startup of the interpreter's exit, a loaded machine).
SLACK = 3.0


def started(tmp_path: Path, wait: bool = True, **settings: str) -> tuple[Server, Path]:
    log = tmp_path / "lifecycle.log"
    server = serve(SERVE, "stop_hangs", wait=wait, SERVER_ADAPTER="waitress", SERVER_GRACEFUL_TIMEOUT=str(GRACE), LIFECYCLE_LOG=str(log), **settings)
    return server, log


def events(log: Path) -> list[str]:
    return [line.split()[0] for line in log.read_text().splitlines()] if log.exists() else []


def stopped(server: Server) -> tuple[int, float]:
    """SIGTERM to the main process: (exit status, seconds to the exit)."""
    began = time.monotonic()
    server.signal(signal.SIGTERM)
    try:
        status = server.wait_exit(GRACE + SLACK + 5)
    except Exception:
        raise AssertionError(f"still running {GRACE + SLACK + 5:g} s after SIGTERM\n{server.describe()}") from None
    return status, time.monotonic() - began


@pytest.mark.parametrize("keep_thread", ["", "1"], ids=["stop-hangs", "stop-hangs-and-a-thread-never-ends"])
def test_a_stop_hook_that_never_returns_is_left_at_the_graceful_timeout(tmp_path, keep_thread):
    server, log = started(tmp_path, KEEP_THREAD=keep_thread)
    try:
        status, took = stopped(server)
        output = server.stdout + server.stderr
    finally:
        server.stop()
    assert status == 0, output
    assert GRACE - 0.5 < took < GRACE + SLACK, f"{took:.2f} s\n{output}"
    assert events(log) == ["start", "started", "stop"]
    assert output.count("did not return within SERVER_GRACEFUL_TIMEOUT") == 1, output


def test_a_thread_start_left_running_does_not_keep_the_process(tmp_path):
    server, log = started(tmp_path, KEEP_THREAD="1", STOP_HANGS="0")
    try:
        status, took = stopped(server)
        output = server.stdout + server.stderr
    finally:
        server.stop()
    assert status == 0, output
    assert took < GRACE + SLACK, f"{took:.2f} s\n{output}"
    assert events(log) == ["start", "started", "stop", "stopped"]
    assert "did not return" not in output, output


def stopped_while_starting(tmp_path: Path, start_seconds: str) -> tuple[int | None, float, str, Path]:
    """SIGTERM while the function's start() runs: (exit status, seconds to exit, output, the hooks' log)."""
    server, log = started(tmp_path, wait=False, START_SECONDS=start_seconds, STOP_HANGS="0")
    try:
        wait_for(lambda: events(log) == ["start"], 20, "the function in its start()")
        status, took = stopped(server)
        return status, took, server.stdout + server.stderr, log
    finally:
        server.stop()


def test_sigterm_while_start_runs_runs_stop_once_start_returns_and_exits_0(tmp_path):
    status, took, output, log = stopped_while_starting(tmp_path, "1")
    assert status == 0, output
    assert took < 1 + SLACK, f"{took:.2f} s\n{output}"
    assert events(log) == ["start", "started", "stop", "stopped"]
    assert "Serving on" not in output and "did not return" not in output, output


def test_a_start_hook_outlasting_the_graceful_timeout_after_sigterm_is_left(tmp_path):
    status, took, output, log = stopped_while_starting(tmp_path, "1000")
    assert status == 0, output
    assert GRACE - 0.5 < took < GRACE + SLACK, f"{took:.2f} s\n{output}"
    assert events(log) == ["start"]
    assert output.count("start() did not return within SERVER_GRACEFUL_TIMEOUT") == 1, output
