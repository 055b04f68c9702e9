"""Security defaults: /metrics can be turned off or moved to a port of its own; dependencies carry both bounds."""

from __future__ import annotations

import configparser
import os
import re
import shutil
import signal
import socket
import subprocess
import time
from importlib.metadata import version
from pathlib import Path

import pytest
import requests

from funcwsgi import make_app

from ..support.paths import REPO, function_folder
from ..support.polling import wait_for
from ..support.ports import free_port
from ..support.processes import SERVE, Server, base_env, children, run_to_exit
from .harness import ADAPTERS, serve


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_metrics_on_a_port_of_their_own(adapter, tmp_path):
    metrics_port = free_port()
    workers = "1" if adapter == "waitress" else "2"
    running = serve(adapter, tmp_path, SERVER_METRICS_PORT=str(metrics_port), SERVER_WORKERS=workers)
    try:
        metrics_url = f"http://127.0.0.1:{metrics_port}/metrics"
        # On the calls' port /metrics is the function's own path now.
        assert running.get("/metrics").text == "hello"
        for _ in range(3):
            assert running.get("/").text == "hello"

        def counted() -> float:
            text = requests.get(metrics_url, timeout=5).text
            found = re.search(r'^function_calls_total\{method="GET"\} (\S+)$', text, re.M)
            return float(found.group(1)) if found else 0.0

        # Every call that reached the function is counted (/metrics and 3 more), whichever worker served it.
        wait_for(lambda: counted() == 4, what="the calls counted on the metrics port", ignore=(requests.ConnectionError, requests.Timeout))
        elsewhere = requests.get(f"http://127.0.0.1:{metrics_port}/", timeout=5)
        assert (elsewhere.status_code, elsewhere.text) == (404, "Not Found")
    finally:
        running.server.stop()


def test_metrics_can_be_turned_off():
    app = make_app(environ={"SERVER_METRICS": "false"}, handler_folder=function_folder("serving"))
    assert "metrics" not in app.layers
    from werkzeug.test import Client

    assert Client(app).get("/metrics").text == "hello"  # the function's own path


def test_a_metrics_port_in_use_exits_2_with_one_line():
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        env = base_env(
            HANDLER_FOLDER=function_folder("hello"), SERVER_HOST="127.0.0.1", SERVER_PORT=str(free_port()), SERVER_METRICS_PORT=str(port)
        )
        result = run_to_exit(SERVE, env)
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines() == [
        f"funcwsgi: error: cannot listen on SERVER_HOST='127.0.0.1' SERVER_METRICS_PORT={port}: Address already in use"
    ]


def test_the_metrics_port_cannot_be_the_calls_port():
    port = str(free_port())
    env = base_env(HANDLER_FOLDER=function_folder("hello"), SERVER_HOST="127.0.0.1", SERVER_PORT=port, SERVER_METRICS_PORT=port)
    result = run_to_exit(SERVE, env)
    assert result.returncode == 2
    assert result.stderr.strip().startswith(f"funcwsgi: error: SERVER_METRICS_PORT={port} is refused: it is SERVER_PORT")


# -- dependencies ----------------------------------------------------------------------------

REQUIREMENT = re.compile(r"^([A-Za-z0-9_.-]+)(\[[^\]]*\])?\s*(.*)$")


def declared_requirements() -> list[tuple[str, str, str]]:
    """(section, name, specifier) of every dependency setup.cfg declares."""
    parser = configparser.ConfigParser()
    parser.read(REPO / "setup.cfg")
    found = [("install_requires", *_split(line)) for line in parser["options"]["install_requires"].split("\n") if line.strip()]
    for extra, lines in parser["options.extras_require"].items():
        found += [(f"extra {extra}", *_split(line)) for line in lines.split("\n") if line.strip()]
    return found


def _split(line: str) -> tuple[str, str]:
    match = REQUIREMENT.match(line.strip())
    assert match, line
    return match.group(1), match.group(3)


def test_every_dependency_has_a_lower_and_an_upper_bound():
    for section, name, specifier in declared_requirements():
        assert ">=" in specifier and "<" in specifier.replace("<=", ""), f"{section}: {name}{specifier} needs >=lower,<upper"


def test_the_installed_versions_the_tests_ran_with_are_inside_the_bounds():
    from packaging.specifiers import SpecifierSet

    checked = 0
    for section, name, specifier in declared_requirements():
        try:
            installed = version(name)
        except Exception:
            continue  # an extra this environment does not install
        assert installed in SpecifierSet(specifier), f"{section}: {name} {installed} is outside {specifier}"
        checked += 1
    assert checked >= 15


# -- read-only friendly: nothing written outside the temporary directory ---------------------


def _files_open_for_writing(pid: int) -> list[str]:
    """Paths of the regular files a process holds open for writing."""
    found = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
            flags = int(next(line for line in Path(f"/proc/{pid}/fdinfo/{fd}").read_text().splitlines() if line.startswith("flags:")).split()[1], 8)
        except (OSError, StopIteration):
            continue  # closed meanwhile
        if target.startswith("/") and flags & (os.O_WRONLY | os.O_RDWR):
            found.append(target)
    return found


def test_nothing_is_written_outside_the_temporary_directory(tmp_path):
    private_tmp = tmp_path / "tmp"
    private_tmp.mkdir()
    function = tmp_path / "function"
    shutil.copytree(function_folder("serving"), function, ignore=shutil.ignore_patterns("__pycache__"))
    before = sorted(str(path.relative_to(function)) for path in function.rglob("*"))
    home = tmp_path / "home"  # where gunicorn would make its control socket's folder (.gunicorn): funcwsgi turns it off
    home.mkdir()
    running = serve(
        "gunicorn", tmp_path, HANDLER_FOLDER=str(function), TMPDIR=str(private_tmp), SERVER_WORKERS="2",
        SERVER_MAX_BODY_SIZE=str(8 * 1024 * 1024), PYTHONDONTWRITEBYTECODE="1", LIFECYCLE_LOG="",
        HOME=str(home), XDG_RUNTIME_DIR="", PYTHONFAULTHANDLER="1",
    )
    try:
        # Several workers keep their metrics in files; a chunked body over 1 MiB is spooled to one.
        chunked = running.request("POST", "/size", data=iter([b"x" * 65536] * 40))
        assert chunked.json() == {"size": 40 * 65536}
        assert running.get("/fail").status_code == 500
        assert "function_calls_total" in running.get("/metrics").text
        master = running.server.process.pid
        written = [path for pid in [master, *children(master)] for path in _files_open_for_writing(pid)]
        allowed = (str(private_tmp), "/dev/shm/", "/dev/null", "/dev/pts/", "/dev/tty")
        own_logs = (running.server._out.name, running.server._err.name)  # where the test sends the server's stdout and stderr
        outside = [path for path in written if not path.startswith(allowed) and path not in own_logs]
        assert outside == []
        assert any(path.startswith(str(private_tmp)) for path in written)  # the metrics files, where they belong
    finally:
        stopped_within(running.server, 15)
    assert sorted(str(path.relative_to(function)) for path in function.rglob("*")) == before  # no bytecode, no files
    assert list(private_tmp.iterdir()) == []  # and what was written in TMPDIR is gone
    # gunicorn's master starts its control socket before it reads a signal: had it been on, a graceful stop finds it made.
    assert list(home.iterdir()) == []


def stopped_within(server: Server, seconds: float) -> None:
    """SIGTERM, then fail unless the server is gone within ``seconds``, with its threads' stacks (PYTHONFAULTHANDLER)."""
    server.begin_stop()
    try:
        server.wait_exit(seconds)
        stuck = ""
    except subprocess.TimeoutExpired:
        # faulthandler writes a process's threads to stderr (gunicorn's workers keep SIGABRT for themselves),
        # one process at a time so that the dumps do not interleave.
        for pid in [*children(server.process.pid), server.process.pid]:
            os.kill(pid, signal.SIGSEGV)
            time.sleep(0.5)
        stuck = server.stderr
    server.stop()
    if stuck:
        pytest.fail(f"still running {seconds} s after SIGTERM; its stderr ends:\n{stuck[-8000:]}")
