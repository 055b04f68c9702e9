"""`gunicorn funcwsgi:app` from a folder with no gunicorn.conf.py, and worker exit statuses, with a real gunicorn."""

from __future__ import annotations

import shutil
import socket
import time
from pathlib import Path

import pytest
import requests

from funcwsgi.application import GUNICORN_COMMAND

from ..conftest import function_folder
from ..servers import BIN, Server, base_env, free_port, run_to_exit

GUNICORN = str(BIN / "gunicorn")
CONFIGURED = [GUNICORN, "-c", "python:funcwsgi.gunicorn_conf", "funcwsgi:app"]


@pytest.fixture
def elsewhere(tmp_path: Path) -> Path:
    """A function's own folder, outside the repository: no gunicorn.conf.py next to it."""
    shutil.copy(Path(function_folder("req_res")) / "handler.py", tmp_path / "handler.py")
    assert not (tmp_path / "gunicorn.conf.py").exists()
    return tmp_path


def listening(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


def funcwsgi_errors(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("funcwsgi: error:")]


def test_gunicorn_without_our_settings_refuses_with_one_line_naming_the_command(elsewhere: Path):
    port = free_port()
    env = base_env(HANDLER_FOLDER=".", SERVER_HOST="127.0.0.1", SERVER_PORT=str(port))
    # A free port instead of gunicorn's default 8000, which another process here may hold.
    result = run_to_exit([GUNICORN, f"--bind=127.0.0.1:{free_port()}", "funcwsgi:app"], env, cwd=elsewhere, timeout=30)
    assert result.returncode == 4, result.stderr  # gunicorn's "App failed to load": stopped, not respawned
    assert funcwsgi_errors(result.stderr) == [
        "funcwsgi: error: gunicorn was started without funcwsgi's settings, so it would ignore SERVER_HOST, "
        f"SERVER_PORT and the rest: run `{GUNICORN_COMMAND}` (or `funcwsgi serve`)"
    ]
    assert result.stderr.count("Booting worker") == 1, "one worker tried, none respawned"
    assert "Starting python314 server" not in result.stdout, "no start-up line names a port nobody listens on"
    assert not listening(port)


def test_a_bad_setting_without_our_settings_is_no_respawn_loop(elsewhere: Path):
    env = base_env(HANDLER_FOLDER=".", SERVER_PORT="70000")
    result = run_to_exit([GUNICORN, f"--bind=127.0.0.1:{free_port()}", "funcwsgi:app"], env, cwd=elsewhere, timeout=30)
    assert result.returncode == 4
    assert result.stderr.count("Booting worker") == 1
    assert len(funcwsgi_errors(result.stderr)) == 1


def test_the_named_command_serves_where_server_settings_say_from_any_folder(elsewhere: Path):
    port = free_port()
    env = base_env(HANDLER_FOLDER=".", SERVER_HOST="127.0.0.1", SERVER_PORT=str(port), SERVER_NUMTHREADS="3")
    server = Server(GUNICORN_COMMAND.replace("gunicorn", GUNICORN, 1).split(), env, port, cwd=elsewhere)
    try:
        server.wait_ready()
        assert requests.get(server.url + "/code").status_code == 201
        assert server.stdout.splitlines()[3] == f"Starting python314 server 127.0.0.1:{port}"
        assert f"Listening at: http://127.0.0.1:{port}" in server.stderr
        assert "Using worker: funcwsgi.adapters.gunicorn_worker.FunctionWorker" in server.stderr
    finally:
        server.stop()


def test_the_named_command_exits_2_with_one_line_on_a_bad_setting(elsewhere: Path):
    result = run_to_exit(CONFIGURED, base_env(HANDLER_FOLDER=".", SERVER_PORT="70000"), cwd=elsewhere, timeout=30)
    assert result.returncode == 2
    assert funcwsgi_errors(result.stderr) == ["funcwsgi: error: SERVER_PORT='70000' is invalid: expected an integer from 1 to 65535"]
    assert "Traceback" not in result.stderr and "Booting worker" not in result.stderr


# -- a function ending its worker: gunicorn reserves statuses 3 and 4 for "stop the server" --


@pytest.fixture(scope="module")
def exiting():
    port = free_port()
    env = base_env(HANDLER_FOLDER=function_folder("exits"), SERVER_HOST="127.0.0.1", SERVER_PORT=str(port), SERVER_WORKERS="1")
    server = Server(CONFIGURED, env, port)
    try:
        server.wait_ready()
        yield server
    finally:
        server.stop()


def worker_pid(server: Server) -> str:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            return requests.get(server.url + "/", timeout=5).text
        except requests.ConnectionError:
            time.sleep(0.05)
    raise AssertionError(f"no worker answered again\n{server.stderr}")


@pytest.mark.parametrize("how", ["os-exit", "sys-exit"])
@pytest.mark.parametrize("status", [3, 4, 1])
def test_no_exit_status_of_a_function_stops_the_server(exiting: Server, how: str, status: int):
    before = worker_pid(exiting)
    reported = f"exited with code {status}"
    seen = exiting.stderr.count(reported)
    with pytest.raises(requests.RequestException):
        requests.get(f"{exiting.url}/{how}/{status}", timeout=10)
    after = worker_pid(exiting)
    assert after != before, "a new worker serves"
    assert exiting.process.poll() is None, exiting.stderr
    assert exiting.stderr.count(reported) > seen, exiting.stderr
    assert "Shutting down: Master" not in exiting.stderr


def test_a_worker_that_fails_to_boot_still_stops_the_server(tmp_path: Path):
    (tmp_path / "fail-start").touch()
    env = base_env(HANDLER_FOLDER=function_folder("serving"), SERVER_HOST="127.0.0.1", SERVER_PORT=str(free_port()), HEALTH_DIR=str(tmp_path))
    result = run_to_exit(CONFIGURED, env, timeout=30)
    assert result.returncode == 3
    assert result.stderr.count("Booting worker") == 1
    assert "Reason: Worker failed to boot." in result.stderr


def test_a_bind_option_that_contradicts_server_port_is_refused(elsewhere: Path):
    port, other = free_port(), free_port()
    env = base_env(HANDLER_FOLDER=".", SERVER_HOST="127.0.0.1", SERVER_PORT=str(port))
    result = run_to_exit([*CONFIGURED[:3], f"--bind=127.0.0.1:{other}", CONFIGURED[3]], env, cwd=elsewhere, timeout=30)
    assert result.returncode == 2, result.stderr
    assert funcwsgi_errors(result.stderr) == [
        f"funcwsgi: error: gunicorn was told to listen on 127.0.0.1:{other}, but SERVER_HOST:SERVER_PORT say 127.0.0.1:{port}: "
        "set SERVER_HOST and SERVER_PORT instead of gunicorn's --bind"
    ]
    assert "Starting python314 server" not in result.stdout and "Booting worker" not in result.stderr
