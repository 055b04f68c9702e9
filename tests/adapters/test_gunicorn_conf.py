"""`gunicorn funcwsgi:app` from a folder with no gunicorn.conf.py, with and without our settings, and worker exit statuses, with a real gunicorn."""

from __future__ import annotations

import shutil
import socket
import time
from pathlib import Path

import pytest
import requests

from funcwsgi.adapters.plain_gunicorn import GUNICORN_COMMAND

from ..support.paths import BIN, function_folder
from ..support.ports import free_port
from ..support.processes import Server, base_env, run_to_exit

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


# -- plain gunicorn, as gunicorn users run any WSGI app: its own options are the user's words --

#: The one line a gunicorn without funcwsgi's settings prints about what it does not apply.
UNAPPLIED = (
    "funcwsgi: warning: gunicorn runs with its own settings only: SERVER_WORKERS, SERVER_NUMTHREADS, SERVER_GRACEFUL_TIMEOUT, "
    "SERVER_MAX_REQUESTS, SERVER_KEEPALIVE_TIMEOUT, SERVER_METRICS_PORT, SERVER_HEADER_TIMEOUT, SERVER_BODY_TIMEOUT, "
    "SERVER_SEND_TIMEOUT, SERVER_MAX_CONNECTIONS, SERVER_MAX_INFLIGHT, funcwsgi's worker class and its server hooks do not apply; "
    f"to apply them run `{GUNICORN_COMMAND}` or `funcwsgi serve`"
)


def warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("funcwsgi: warning:")]


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory):
    """`gunicorn --bind H:P -w 2 --threads 3 funcwsgi:app` in a function's own folder, no SERVER_* setting."""
    folder = tmp_path_factory.mktemp("plain")
    shutil.copy(Path(function_folder("serving")) / "handler.py", folder / "handler.py")
    port = free_port()
    server = Server([GUNICORN, "--bind", f"127.0.0.1:{port}", "-w", "2", "--threads", "3", "funcwsgi:app"], base_env(HANDLER_FOLDER="."), port, cwd=folder)
    try:
        server.wait_ready()
        yield server
    finally:
        server.stop()


def test_plain_gunicorn_serves_with_its_own_bind_workers_and_threads(plain: Server):
    assert requests.get(plain.url + "/path/x").json() == {"path": "/path/x", "args": {}}
    assert f"Listening at: {plain.url}" in plain.stderr
    assert "Using worker: gthread" in plain.stderr  # --threads 3: gunicorn's own choice, not funcwsgi's worker
    plain.wait_for_output("Booting worker", timeout=10)
    deadline = time.monotonic() + 10
    while plain.stderr.count("Booting worker") < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert plain.stderr.count("Booting worker") == 2


def test_plain_gunicorn_names_where_it_listens_and_what_it_does_not_apply_once(plain: Server):
    deadline = time.monotonic() + 10
    while plain.stderr.count("Booting worker") < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    requests.get(plain.url + "/")
    # The quiet worker may answer while the one that speaks is still loading: wait for the latter's last line.
    plain.wait_for_output(UNAPPLIED)
    lines = plain.stdout.splitlines()
    assert [line for line in lines if line.startswith("Starting ")] == [f"Starting python314 server 127.0.0.1:{plain.port}"]
    assert warnings(plain.stderr) == [UNAPPLIED]  # one line, once, though both workers loaded the function


def test_plain_gunicorn_with_our_worker_class_names_only_what_that_does_not_apply(elsewhere: Path):
    port = free_port()
    command = [GUNICORN, f"--bind=127.0.0.1:{port}", "-k", "funcwsgi.adapters.gunicorn.worker.HttpEdgeWorker", "funcwsgi:app"]
    server = Server(command, base_env(HANDLER_FOLDER=".", SERVER_HEADER_TIMEOUT="0.5"), port, cwd=elsewhere)
    try:
        server.wait_ready()
        with socket.create_connection(("127.0.0.1", port)) as slow:
            slow.sendall(b"GET / HTTP/1.1\r\n")  # and never the rest of the head
            slow.settimeout(5)
            assert slow.recv(100).startswith(b"HTTP/1.1 408"), "SERVER_HEADER_TIMEOUT applies"
        assert warnings(server.stderr) == [
            "funcwsgi: warning: gunicorn runs with its own settings only: SERVER_WORKERS, SERVER_NUMTHREADS, SERVER_GRACEFUL_TIMEOUT, "
            "SERVER_MAX_REQUESTS, SERVER_KEEPALIVE_TIMEOUT, SERVER_METRICS_PORT and its server hooks do not apply; "
            f"to apply them run `{GUNICORN_COMMAND}` or `funcwsgi serve`"
        ]
    finally:
        server.stop()


def test_plain_gunicorn_runs_start_in_its_worker_and_stop_at_exit(tmp_path: Path):
    shutil.copy(Path(function_folder("serving")) / "handler.py", tmp_path / "handler.py")
    port = free_port()
    env = base_env(HANDLER_FOLDER=".", LIFECYCLE_LOG=str(tmp_path / "lifecycle.log"))
    server = Server([GUNICORN, f"--bind=127.0.0.1:{port}", "funcwsgi:app"], env, port, cwd=tmp_path)
    try:
        server.wait_ready()
        pid = requests.get(server.url + "/pid").json()["pid"]
        assert (tmp_path / "lifecycle.log").read_text().splitlines() == [f"start {pid}"]
        server.signal()
        assert server.wait_exit(timeout=20) == 0
        assert (tmp_path / "lifecycle.log").read_text().splitlines() == [f"start {pid}", f"stop {pid}"]
    finally:
        server.stop()


def test_plain_gunicorn_whose_start_hook_fails_stops_with_one_line(tmp_path: Path):
    (tmp_path / "fail-start").touch()
    env = base_env(HANDLER_FOLDER=function_folder("serving"), HEALTH_DIR=str(tmp_path))
    result = run_to_exit([GUNICORN, f"--bind=127.0.0.1:{free_port()}", "funcwsgi:app"], env, cwd=tmp_path)
    assert result.returncode == 3, result.stderr
    assert funcwsgi_errors(result.stderr) == [
        f"funcwsgi: error: start() in {function_folder('serving')}/handler.py raised RuntimeError: cannot reach the database"
    ]
    assert "Reason: Worker failed to boot." in result.stderr


def test_plain_gunicorn_with_server_settings_that_agree_and_its_options_in_gunicorn_cmd_args(elsewhere: Path):
    # The case: SERVER_HOST and SERVER_PORT set to the address gunicorn is told to bind.
    port = free_port()
    env = base_env(HANDLER_FOLDER=".", SERVER_HOST="127.0.0.1", SERVER_PORT=str(port), GUNICORN_CMD_ARGS=f"--bind 127.0.0.1:{port}")
    server = Server([GUNICORN, "funcwsgi:app"], env, port, cwd=elsewhere)
    try:
        server.wait_ready()
        assert requests.get(server.url + "/code").status_code == 201
        assert server.stdout.splitlines()[3] == f"Starting python314 server 127.0.0.1:{port}"
    finally:
        server.stop()


@pytest.mark.parametrize(
    "setting",
    [
        pytest.param("SERVER_PORT={other}", id="port"),
        pytest.param("SERVER_HOST=0.0.0.0", id="host"),
        pytest.param("PORT={other}", id="a-platform-port"),
    ],
)
def test_plain_gunicorn_bound_elsewhere_than_an_explicit_setting_stops_with_one_line(elsewhere: Path, setting: str):
    port, other = free_port(), free_port()
    name, _, value = setting.format(other=other).partition("=")
    result = run_to_exit([GUNICORN, f"--bind=127.0.0.1:{port}", "funcwsgi:app"], base_env(HANDLER_FOLDER=".", **{name: value}), cwd=elsewhere)
    assert result.returncode == 3, result.stderr  # gunicorn's "Worker failed to boot": stopped, not respawned
    assert funcwsgi_errors(result.stderr) == [
        f"funcwsgi: error: {name}={value!r} contradicts gunicorn's bind 127.0.0.1:{port}: bind where it says, or unset it"
    ]
    assert result.stderr.count("Booting worker") == 1, "one worker tried, none respawned"
    assert "Starting python314 server" not in result.stdout and "Traceback" not in result.stderr


def test_a_bad_setting_without_our_settings_is_no_respawn_loop(elsewhere: Path):
    env = base_env(HANDLER_FOLDER=".", SERVER_PORT="70000")
    result = run_to_exit([GUNICORN, f"--bind=127.0.0.1:{free_port()}", "funcwsgi:app"], env, cwd=elsewhere, timeout=30)
    assert result.returncode == 3  # gunicorn's "Worker failed to boot": stopped, not respawned
    assert result.stderr.count("Booting worker") == 1
    assert funcwsgi_errors(result.stderr) == ["funcwsgi: error: SERVER_PORT='70000' is invalid: expected an integer from 1 to 65535"]


def test_the_named_command_serves_where_server_settings_say_from_any_folder(elsewhere: Path):
    port = free_port()
    env = base_env(HANDLER_FOLDER=".", SERVER_HOST="127.0.0.1", SERVER_PORT=str(port), SERVER_NUMTHREADS="3")
    server = Server(GUNICORN_COMMAND.replace("gunicorn", GUNICORN, 1).split(), env, port, cwd=elsewhere)
    try:
        server.wait_ready()
        assert requests.get(server.url + "/code").status_code == 201
        assert server.stdout.splitlines()[3] == f"Starting python314 server 127.0.0.1:{port}"
        assert f"Listening at: http://127.0.0.1:{port}" in server.stderr
        assert "Using worker: funcwsgi.adapters.gunicorn.worker.HttpEdgeWorker" in server.stderr
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
        f"funcwsgi: error: SERVER_HOST='127.0.0.1' and SERVER_PORT='{port}' contradict gunicorn's bind 127.0.0.1:{other}: "
        "bind where they say, or unset them"
    ]
    assert "Starting python314 server" not in result.stdout and "Booting worker" not in result.stderr


def test_a_bind_option_wins_over_the_default_server_port_with_our_settings(elsewhere: Path):
    port = free_port()
    server = Server([*CONFIGURED[:3], f"--bind=127.0.0.1:{port}", CONFIGURED[3]], base_env(HANDLER_FOLDER="."), port, cwd=elsewhere)
    try:
        server.wait_ready()
        assert server.stdout.splitlines()[3] == f"Starting python314 server 127.0.0.1:{port}"
        assert "Using worker: funcwsgi.adapters.gunicorn.worker.HttpEdgeWorker" in server.stderr
        assert warnings(server.stderr) == []
    finally:
        server.stop()
