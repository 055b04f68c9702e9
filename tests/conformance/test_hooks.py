"""C9: probes and the lifecycle hooks; graceful shutdown on SIGTERM."""

from __future__ import annotations

import json
import threading

import pytest

from ..support.polling import wait_for
from .kit import SECRET, call, client_errors, main_line, serve


@pytest.fixture(scope="module")
def hooks(launcher, tmp_path_factory):
    folder = tmp_path_factory.mktemp("hooks")
    log = folder / "lifecycle.log"
    with serve(launcher, "hooks", {"LIFECYCLE_LOG": str(log), "HEALTH_DIR": str(folder)}) as running:
        running.health_dir = folder  # type: ignore[attr-defined]
        running.lifecycle = log  # type: ignore[attr-defined]
        yield running


def flagged(runtime, name):
    class Flag:
        def __enter__(self):
            (runtime.health_dir / name).touch()

        def __exit__(self, *exc):
            (runtime.health_dir / name).unlink()

    return Flag()


def test_start_ran_once_before_serving(hooks):
    assert hooks.get("/").text == "hooks"
    assert hooks.lifecycle.read_text().splitlines() == ["start"]


def test_all_probes_answer_ok_while_the_hooks_say_so(hooks):
    for path in ("/healthz", "/health/readiness", "/health/liveness"):
        response = hooks.get(path)
        assert (response.status_code, response.text) == (200, "OK"), path


def test_ready_saying_why_not_is_a_503_with_its_reason(hooks):
    with flagged(hooks, "not-ready"):
        response = hooks.get("/health/readiness")
        assert (response.status_code, response.text) == (503, "warming up the cache")
        assert response.headers["Content-Type"].split(";")[0] == "text/plain"
        assert hooks.get("/healthz").status_code == 200
        assert hooks.get("/health/liveness").status_code == 200
    assert hooks.get("/health/readiness").status_code == 200


def test_alive_false_fails_liveness_and_healthz(hooks):
    with flagged(hooks, "not-alive"):
        for path in ("/health/liveness", "/healthz"):
            response = hooks.get(path)
            assert (response.status_code, response.text) == (503, "alive() returned False"), path
        assert hooks.get("/health/readiness").status_code == 200
    assert hooks.get("/healthz").status_code == 200


def test_a_hook_that_throws_is_a_503_without_its_error(hooks):
    with flagged(hooks, "ready-raises"):
        response = hooks.get("/health/readiness")
        assert (response.status_code, response.text) == (503, "ready() failed")
        assert SECRET not in response.text
    hooks.wait_for_log(SECRET)


def _hook_failures(runtime, request_id):
    return [r for r in runtime.log_records() if r.get("request_id") == request_id and SECRET in json.dumps(r)]


def test_a_hooks_failure_is_logged_with_the_probes_request_id(hooks):
    # The probes run inside the request-id layer, as the function does: their records carry the id.
    with flagged(hooks, "ready-raises"):
        assert hooks.get("/health/readiness", headers={"X-Request-Id": "kit-probe-1"}).status_code == 503
        wait_for(lambda: bool(_hook_failures(hooks, "kit-probe-1")), 5, "the hook's failure with the probe's id", hooks.read_log)


def test_a_failing_start_hook_stops_start_up_with_one_line(launcher, tmp_path):
    (tmp_path / "fail-start").touch()
    exited = launcher.run_to_exit("hooks", {"LIFECYCLE_LOG": str(tmp_path / "log"), "HEALTH_DIR": str(tmp_path)})
    assert exited.returncode != 0
    line = main_line(exited.stderr)
    assert "start()" in line and line.endswith("cannot reach the database"), line


def _refused(launcher, url: str, seen: list[str]) -> bool:
    not_connected, timed_out = client_errors(launcher)
    try:
        response = call(launcher, "GET", url + "/healthz", timeout=0.5)
    except not_connected:
        return True
    except timed_out:
        seen.append("timeout")
        return False
    seen.append(str(response.status_code))
    return False


def test_sigterm_lets_the_call_in_flight_finish_refuses_new_ones_runs_stop_and_exits_0(launcher, tmp_path):
    log = tmp_path / "lifecycle.log"
    with serve(launcher, "hooks", {"LIFECYCLE_LOG": str(log), "HEALTH_DIR": str(tmp_path), "SERVER_CALL_TIMEOUT": "30"}) as running:
        result: dict[str, object] = {}
        slow = threading.Thread(target=lambda: result.setdefault("slow", running.get("/sleep?seconds=1", timeout=20)))
        slow.start()
        wait_for(lambda: "sleeping" in (log.read_text() if log.exists() else ""), 10, "the call in flight")
        running.process.signal()
        seen: list[str] = []
        try:
            wait_for(lambda: _refused(launcher, running.url, seen), 5, "new connections refused")
        except AssertionError as error:
            raise AssertionError(f"{error}; answers seen: {seen}") from None
        slow.join(timeout=20)
        slow_answer = result["slow"]
        assert (slow_answer.status_code, slow_answer.text) == (200, "slept")  # type: ignore[attr-defined]
        assert running.process.wait_exit(timeout=30) == 0, running.process.describe()
        assert log.read_text().splitlines()[-1] == "stop"
