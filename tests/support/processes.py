"""Real servers as subprocesses: started, waited for, read, stopped; commands run to their end.

A server runs in a session of its own with its stdout and stderr in files the
test reads while it runs; stopping it stops its whole process group (a master
and its workers). Standard library only (the conformance kit uses it);
:func:`base_env` imports funcwsgi when it is called.
"""

from __future__ import annotations

import http.client
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from .paths import BIN, REPO, function_folder
from .polling import wait_for
from .ports import free_port

#: A function served as a container serves it (gunicorn with funcwsgi's app), and by funcwsgi's own command.
GUNICORN = [str(BIN / "gunicorn"), "funcwsgi:app"]
SERVE = [str(BIN / "funcwsgi"), "serve"]
#: The funcwsgi CLI as a user runs it, by the tests' own interpreter.
FUNCWSGI = [sys.executable, "-m", "funcwsgi"]


def base_env(**settings: str) -> dict[str, str]:
    """The test process's environment without any funcwsgi setting, plus ``settings``."""
    from funcwsgi.config import known_env_names

    known = known_env_names()
    env = {k: v for k, v in os.environ.items() if k not in known}
    env["PYTHONUNBUFFERED"] = "1"
    env.update(settings)
    return env


def http_get(host: str, port: int, path: str = "/", timeout: float = 2.0) -> tuple[int, bytes]:
    """One plain HTTP/1.1 GET, no proxy from the environment: (status, body)."""
    connection = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def stop_group(process: subprocess.Popen[bytes] | subprocess.Popen[str], grace: float = 20.0) -> None:
    """SIGTERM to the process's group, SIGKILL after ``grace`` seconds; gone already is fine."""
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=grace)
    except (subprocess.TimeoutExpired, ProcessLookupError):
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.wait(timeout=5)


class Server:
    """A server process on ``host:port`` whose stdout and stderr go to files the test can read."""

    def __init__(self, command: list[str], env: dict[str, str], port: int, host: str = "127.0.0.1", cwd: str | Path | None = None) -> None:
        self.command = command
        self.port = port
        self.host = host
        bracketed = f"[{host}]" if ":" in host else host
        self.url = f"http://{bracketed}:{port}"
        self._out = tempfile.NamedTemporaryFile("w+", prefix="server-out-", suffix=".log", delete=False)
        self._err = tempfile.NamedTemporaryFile("w+", prefix="server-err-", suffix=".log", delete=False)
        self.process = subprocess.Popen(
            command, env=env, cwd=str(cwd or REPO), stdout=self._out, stderr=self._err, stdin=subprocess.DEVNULL, start_new_session=True
        )

    @property
    def stdout(self) -> str:
        return Path(self._out.name).read_text(errors="replace")

    @property
    def stderr(self) -> str:
        return Path(self._err.name).read_text(errors="replace")

    def describe(self) -> str:
        """The command and the ends of its output, for a failure's message."""
        return f"command: {shlex.join(self.command)}\nstdout:\n{self.stdout[-3000:]}\nstderr:\n{self.stderr[-3000:]}"

    def wait_ready(self, path: str = "/healthz", timeout: float = 30.0) -> None:
        """Poll ``path`` until the server answers it with any status below 500."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"the server exited with status {self.process.returncode} before answering {path}\n{self.describe()}")
            try:
                if http_get(self.host, self.port, path, timeout=1)[0] < 500:
                    return
            except (OSError, http.client.HTTPException):  # not listening yet, or listening but still booting
                pass
            time.sleep(0.05)
        raise AssertionError(f"the server did not answer {path} within {timeout:g} s\n{self.describe()}")

    def started(self, path: str = "/healthz", timeout: float = 30.0) -> Server:
        """This server once it answers ``path``; stopped if it does not (and the test fails)."""
        try:
            self.wait_ready(path, timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def wait_for_output(self, text: str, timeout: float = 10.0) -> str:
        """Both outputs once ``text`` is in either."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            both = self.stdout + self.stderr
            if text in both:
                return both
            time.sleep(0.05)
        raise AssertionError(f"{text!r} did not appear in the server's output within {timeout:g} s\n{self.describe()}")

    def wait_refusing(self, timeout: float = 5.0) -> None:
        """Wait until the server refuses new connections (as it must soon after SIGTERM); a failure lists what it answered meanwhile."""
        seen: list[str] = []

        def refused() -> bool:
            try:
                status, _ = http_get(self.host, self.port, "/healthz", timeout=0.5)
            except ConnectionError:  # refused, reset, or closed without an answer
                return True
            except (TimeoutError, http.client.HTTPException) as error:
                seen.append(type(error).__name__)
                return False
            seen.append(str(status))
            return False

        try:
            wait_for(refused, timeout, "new connections refused")
        except AssertionError as error:
            raise AssertionError(f"{error}; answers seen: {seen}") from None

    def wait_exit(self, timeout: float = 30.0) -> int:
        return self.process.wait(timeout=timeout)

    def signal(self, signum: int = signal.SIGTERM) -> None:
        """A signal to the main process only (SIGTERM: as Kubernetes stops a container)."""
        self.process.send_signal(signum)

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def begin_stop(self) -> None:
        """SIGTERM to the whole process group, without waiting (to stop several at once)."""
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass

    def stop(self) -> None:
        """Stop the process group (SIGTERM, then SIGKILL) and remove the output files."""
        stop_group(self.process)
        for handle in (self._out, self._err):
            handle.close()
            try:
                os.unlink(handle.name)
            except FileNotFoundError:
                pass


def start(
    command: list[str], function: str | None = None, *, host: str = "127.0.0.1", wait: bool = True, ready: str = "/healthz", **settings: str
) -> Server:
    """``command`` serving ``tests/functions/<function>`` on a free port of ``host``, configured by environment only.

    ``settings`` come last and may override any of it (``SERVER_HOST`` to bind
    elsewhere than where the test connects); with ``wait`` the server answers
    ``ready`` before this returns (or is stopped and the test fails). Use it as
    a context manager to stop it at the end.
    """
    port = free_port(host)
    env = base_env(SERVER_HOST=host, SERVER_PORT=str(port))
    if function is not None:
        env["HANDLER_FOLDER"] = function_folder(function)
    env.update(settings)
    server = Server(command, env, port, host=host)
    return server.started(ready) if wait else server


@dataclass
class ServedFunction:
    """A function served on ``adapter`` and its folder: the lifecycle log and the health files (LIFECYCLE_LOG, HEALTH_DIR)."""

    adapter: str
    server: Server
    folder: Path

    @property
    def url(self) -> str:
        return self.server.url

    def events(self) -> list[str]:
        """The lifecycle hooks' lines the function wrote (tests/functions/serving)."""
        path = self.folder / "lifecycle.log"
        return path.read_text().splitlines() if path.exists() else []

    def output(self) -> str:
        return self.server.stdout + self.server.stderr


def run_to_exit(command: list[str], env: dict[str, str], timeout: float = 30.0, cwd: str | Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run a command that is expected to stop by itself (e.g. a start-up error); one that does not is killed and fails."""
    process = subprocess.Popen(
        command, env=env, cwd=str(cwd or REPO), stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
        text=True, start_new_session=True,
    )
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate()
        raise AssertionError(f"{shlex.join(command)} did not exit within {timeout:g} s\nstdout:\n{stdout[-2000:]}\nstderr:\n{stderr[-2000:]}") from None
    return subprocess.CompletedProcess(command, process.returncode, stdout, stderr)


def debian_tool(command: str, package: str) -> str:
    """The path of ``command``, else skip the test with one line naming the Debian package that has it.

    ``make setup`` installs the packages the tests use (``APT_PACKAGES`` in the
    Makefile) when it runs as root where apt is; elsewhere they may be missing.
    """
    import pytest

    found = shutil.which(command)
    if found is None:
        pytest.skip(f"{command} not found: install the Debian package {package} (make setup does, as root with apt)")
    return found


# -- a process tree, from /proc ---------------------------------------------------


def children(pid: int) -> list[int]:
    """The process ids whose parent is ``pid``."""
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for task in tasks:
        try:
            found += [int(child) for child in Path(f"/proc/{pid}/task/{task}/children").read_text().split()]
        except OSError:
            continue
    return found


def process_tree(pid: int) -> list[int]:
    """``pid`` and all its descendants."""
    tree, pending = [], [pid]
    while pending:
        current = pending.pop()
        tree.append(current)
        pending += children(current)
    return tree


def process_figures(pid: int) -> dict[str, int]:
    """Resident memory (kB), threads and open file descriptors of a process."""
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    return {
        "rss_kb": int(fields["VmRSS"].split()[0]),
        "threads": int(fields["Threads"]),
        "fds": len(os.listdir(f"/proc/{pid}/fd")),
    }
