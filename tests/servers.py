"""Real servers as subprocesses on ephemeral loopback ports, for the tests."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import requests

REPO = Path(__file__).resolve().parent.parent
FUNCTIONS = Path(__file__).resolve().parent / "functions"
BIN = Path(sys.executable).parent


# Ports for the tests' servers come from below the kernel's ephemeral range, so the
# thousands of client connections a load test opens can never take a port a server is about
# to bind, and a port is handed out once per test process. The start is spread by pid, so
# two test runs at once (two worktrees) rarely probe the same ports.
_SERVER_PORTS = range(20000, 32000)
_handed_out: set[int] = set()
_next_port = [_SERVER_PORTS.start + (os.getpid() * 97) % len(_SERVER_PORTS)]


def free_port(host: str = "127.0.0.1") -> int:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    for _ in range(len(_SERVER_PORTS)):
        port = _next_port[0]
        _next_port[0] = port + 1 if port + 1 < _SERVER_PORTS.stop else _SERVER_PORTS.start
        if port in _handed_out:
            continue
        with socket.socket(family, socket.SOCK_STREAM) as sock:
            try:
                sock.bind((host, port))
            except OSError:
                continue
        _handed_out.add(port)
        return port
    raise RuntimeError(f"no free port left in {_SERVER_PORTS}")


def base_env(**settings: str) -> dict[str, str]:
    """The test process's environment without any funcwsgi setting, plus ``settings``."""
    from funcwsgi.config import known_env_names

    known = known_env_names()
    env = {k: v for k, v in os.environ.items() if k not in known}
    env["PYTHONUNBUFFERED"] = "1"
    env.update(settings)
    return env


class Server:
    """A server process whose stdout and stderr go to files the test can read."""

    def __init__(self, command: list[str], env: dict[str, str], port: int, host: str = "127.0.0.1", cwd: str | Path | None = None) -> None:
        self.port = port
        self.host = host
        bracketed = f"[{host}]" if ":" in host else host
        self.url = f"http://{bracketed}:{port}"
        self._out = tempfile.NamedTemporaryFile("w+", prefix="server-out-", suffix=".log", delete=False)
        self._err = tempfile.NamedTemporaryFile("w+", prefix="server-err-", suffix=".log", delete=False)
        self.process = subprocess.Popen(
            command, env=env, cwd=str(cwd or REPO), stdout=self._out, stderr=self._err, start_new_session=True
        )

    @property
    def stdout(self) -> str:
        return Path(self._out.name).read_text()

    @property
    def stderr(self) -> str:
        return Path(self._err.name).read_text()

    def wait_ready(self, path: str = "/healthz", timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"server exited with {self.process.returncode}\nstdout:\n{self.stdout}\nstderr:\n{self.stderr}")
            try:
                if requests.get(self.url + path, timeout=1).status_code < 500:
                    return
            except (requests.ConnectionError, requests.Timeout):  # not listening yet, or listening but still booting
                pass
            time.sleep(0.05)
        raise AssertionError(f"server not ready after {timeout}s\nstdout:\n{self.stdout}\nstderr:\n{self.stderr}")

    def wait_exit(self, timeout: float = 30.0) -> int:
        return self.process.wait(timeout=timeout)

    def wait_for_output(self, text: str, timeout: float = 10.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            both = self.stdout + self.stderr
            if text in both:
                return both
            time.sleep(0.05)
        raise AssertionError(f"{text!r} not in output\nstdout:\n{self.stdout}\nstderr:\n{self.stderr}")

    def signal(self, signum: int = signal.SIGTERM) -> None:
        self.process.send_signal(signum)

    def stop(self) -> None:
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGTERM)
                self.process.wait(timeout=15)
            except (subprocess.TimeoutExpired, ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=5)
        for handle in (self._out, self._err):
            handle.close()
            os.unlink(handle.name)


def run_to_exit(command: list[str], env: dict[str, str], timeout: float = 30.0, cwd: str | Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run a command that is expected to stop by itself (e.g. a start-up error)."""
    return subprocess.run(command, env=env, cwd=str(cwd or REPO), capture_output=True, text=True, timeout=timeout)


def debian_tool(command: str, package: str) -> str:
    """The path of ``command``, else skip the test with one line naming the Debian package that has it.

    ``make setup`` installs the packages the tests use (``APT_PACKAGES`` in the
    Makefile) when it runs as root where apt is; elsewhere they may be missing.
    """
    import shutil

    import pytest

    found = shutil.which(command)
    if found is None:
        pytest.skip(f"{command} not found: install the Debian package {package} (make setup does, as root with apt)")
    return found
