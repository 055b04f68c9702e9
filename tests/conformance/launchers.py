"""How the kit starts a runtime under test: a launcher per runtime.

A launcher knows a runtime's command, the environment it adds, where it runs
and which language its fixtures are written in. The kit hands it a fixture
and a set of settings (environment variables only, as the API rework wants
every runtime configured) and gets back a running process: its URL, its
stdout and stderr captured to files, SIGTERM, and its exit status. A
launch that is expected to fail (a bad value, a function that cannot load)
is run to its end instead.

Only the standard library: the kit must run anywhere.
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

KIT = Path(__file__).resolve().parent
REPO = KIT.parent.parent
FIXTURES = KIT / "fixture"
#: Fixture languages and the files a fixture's module may be, in its folder (HANDLER_MODULE_NAME=handler).
MODULE_FILES = {
    "python": ("handler.py",),
    "python-async": ("handler.py",),  # the python fixtures written async def: funcwsgi's event-loop path
    "nodejs26": ("handler.js", "handler.mjs", "handler.cjs"),
}

#: Prefixes and names of everything a runtime of the rework (or a platform it stands in
#: for) reads from its environment: the kit's process must not hand its own down.
_SETTING_PREFIXES = ("SERVER_", "HANDLER_", "FUNC_", "TRACE_", "PUBLISHER_", "OTEL_", "KYMA_", "KUBELESS_", "KAFKA_", "GRANIAN_")
_SETTING_NAMES = {
    "PORT", "MOD_NAME", "FUNCTION_PATH", "FUNCTION_TARGET", "CHERRYPY_NUMTHREADS", "SERVICE_NAMESPACE",
    "GUNICORN_CMD_ARGS", "PROMETHEUS_MULTIPROC_DIR", "WEB_CONCURRENCY", "NODE_OPTIONS",
}


#: The kit's ports: below the kernel's ephemeral range (from 32768), so no client connection
#: can take one between the kit choosing it and the runtime binding it, and apart from the
#: range the rest of the test suite uses (20000-32000). Each is handed out once per process;
#: the start is spread by pid so two kit runs at once rarely probe the same ports.
_PORTS = range(10000, 20000)
_handed_out: set[int] = set()
_next = [_PORTS.start + (os.getpid() * 89) % len(_PORTS)]


def free_port() -> int:
    for _ in range(len(_PORTS)):
        port = _next[0]
        _next[0] = port + 1 if port + 1 < _PORTS.stop else _PORTS.start
        if port in _handed_out:
            continue
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
        _handed_out.add(port)
        return port
    raise RuntimeError(f"no free port left in {_PORTS.start}-{_PORTS.stop - 1}")


def clean_environment() -> dict[str, str]:
    """This process's environment without any runtime setting."""
    return {
        key: value for key, value in os.environ.items()
        if not key.startswith(_SETTING_PREFIXES) and key not in _SETTING_NAMES
    }


@dataclass(frozen=True)
class Exited:
    """A launch that ended by itself."""

    status: int
    stdout: str
    stderr: str


class Running:
    """A runtime process serving on 127.0.0.1:port, its output going to files the kit reads."""

    def __init__(self, command: list[str], env: dict[str, str], port: int, cwd: Path) -> None:
        self.command = command
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self._out = tempfile.NamedTemporaryFile("w+", prefix="conformance-out-", suffix=".log", delete=False)
        self._err = tempfile.NamedTemporaryFile("w+", prefix="conformance-err-", suffix=".log", delete=False)
        self.process = subprocess.Popen(
            command, env=env, cwd=str(cwd), stdout=self._out, stderr=self._err, stdin=subprocess.DEVNULL, start_new_session=True
        )

    @property
    def stdout(self) -> str:
        return Path(self._out.name).read_text(errors="replace")

    @property
    def stderr(self) -> str:
        return Path(self._err.name).read_text(errors="replace")

    def describe(self) -> str:
        return f"command: {shlex.join(self.command)}\nstdout:\n{self.stdout[-3000:]}\nstderr:\n{self.stderr[-3000:]}"

    def wait_ready(self, timeout: float = 40.0) -> None:
        """Poll /healthz until the runtime answers (any status below 500)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"the runtime exited with status {self.process.returncode} before serving\n{self.describe()}")
            try:
                with urllib.request.urlopen(self.url + "/healthz", timeout=1) as answer:
                    if answer.status < 500:
                        return
            except urllib.error.HTTPError as error:
                if error.code < 500:
                    return
            except OSError:  # not listening yet
                pass
            time.sleep(0.05)
        raise AssertionError(f"the runtime did not answer /healthz within {timeout:.0f} s\n{self.describe()}")

    def wait_for_output(self, text: str, timeout: float = 10.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            both = self.stdout + self.stderr
            if text in both:
                return both
            time.sleep(0.05)
        raise AssertionError(f"{text!r} did not appear in the runtime's output within {timeout:.0f} s\n{self.describe()}")

    def terminate(self) -> None:
        """SIGTERM to the runtime's main process, as Kubernetes sends it."""
        self.process.send_signal(signal.SIGTERM)

    def wait_exit(self, timeout: float = 30.0) -> int:
        return self.process.wait(timeout=timeout)

    def begin_stop(self) -> None:
        """SIGTERM to the whole process group, without waiting (to stop several at once)."""
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass

    def stop(self) -> None:
        """Stop the process group (SIGTERM, then SIGKILL) and remove the output files."""
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGTERM)
                self.process.wait(timeout=20)
            except (subprocess.TimeoutExpired, ProcessLookupError):
                try:
                    os.killpg(self.process.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.process.wait(timeout=5)
        for handle in (self._out, self._err):
            handle.close()
            try:
                os.unlink(handle.name)
            except FileNotFoundError:
                pass


@dataclass(frozen=True)
class Launcher:
    """One runtime under test, started by command with environment variables only."""

    name: str
    runtime_name: str  # what it calls itself: FUNC_RUNTIME's default, in "Starting <name> server"
    language: str  # the fixture folder under fixture/
    command: tuple[str, ...]
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: Path = REPO
    #: How the kit's client speaks to the runtime: "http/1.1", or "h2c" (HTTP/2 without TLS, with prior knowledge).
    protocol: str = "http/1.1"

    def fixture(self, name: str) -> Path:
        """The folder of fixture ``name`` in this runtime's language."""
        return FIXTURES / self.language / name

    def module_file(self, name: str) -> Path:
        """The fixture's module file: the first of the language's module file names in its folder."""
        folder = self.fixture(name)
        for candidate in MODULE_FILES[self.language]:
            if (folder / candidate).is_file():
                return folder / candidate
        return folder / MODULE_FILES[self.language][0]

    def environment(self, fixture: str | None, settings: Mapping[str, str]) -> dict[str, str]:
        env = clean_environment()
        env.update(PYTHONUNBUFFERED="1", PYTHONDONTWRITEBYTECODE="1")
        env.update(self.env)
        if fixture is not None:
            env["HANDLER_FOLDER"] = str(self.fixture(fixture))
        env.update(settings)
        return env

    def check_installed(self) -> None:
        program = Path(self.command[0])
        if not program.is_file() or not os.access(program, os.X_OK):
            raise AssertionError(f"runtime {self.name!r}: {program} is not an executable file (is the runtime set up? `make setup`)")

    def start(self, fixture: str | None, settings: Mapping[str, str], *, port: int | None = None, wait: bool = True) -> Running:
        """Start the runtime serving ``fixture`` on a free loopback port (or ``port``), with ``settings``.

        The port goes in ``SERVER_PORT`` unless ``settings`` name the port themselves
        (a compatibility name), in which case ``port`` must be given.
        """
        self.check_installed()
        chosen = port or free_port()
        names_a_port = any(key in settings for key in ("SERVER_PORT", "FUNC_PORT", "PORT"))
        defaults = {"SERVER_HOST": "127.0.0.1"} if names_a_port else {"SERVER_HOST": "127.0.0.1", "SERVER_PORT": str(chosen)}
        running = Running(list(self.command), self.environment(fixture, {**defaults, **settings}), chosen, self.cwd)
        if wait:
            try:
                running.wait_ready()
            except BaseException:
                running.stop()
                raise
        return running

    def run_to_exit(self, fixture: str | None, settings: Mapping[str, str], timeout: float = 40.0) -> Exited:
        """Run a launch that must end by itself (start-up errors); a runtime that serves instead is stopped."""
        self.check_installed()
        defaults = {"SERVER_HOST": "127.0.0.1", "SERVER_PORT": str(free_port())}
        process = subprocess.Popen(
            list(self.command), env=self.environment(fixture, {**defaults, **settings}), cwd=str(self.cwd),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, start_new_session=True,
        )
        try:
            stdout, stderr = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            stdout, stderr = process.communicate()
            raise AssertionError(f"runtime {self.name!r} did not exit within {timeout:.0f} s\nstdout:\n{stdout[-2000:]}\nstderr:\n{stderr[-2000:]}") from None
        return Exited(process.returncode, stdout, stderr)


def _python_bin() -> Path:
    return Path(sys.executable).parent


#: The HTTP servers funcwsgi runs on, each through `funcwsgi serve` with SERVER_ADAPTER.
FUNCWSGI_ADAPTERS = ("gunicorn", "waitress", "werkzeug", "granian")
#: The servers of funcwsgi's event-loop path (docs/async.md), by launcher-name suffix: `funcwsgi serve`
#: as it is (gunicorn with its uvicorn worker) and granian's ASGI interface.
LOOP_ADAPTERS: dict[str, dict[str, str]] = {"": {}, "-granian": {"SERVER_ADAPTER": "granian"}}


def local_launchers() -> list[Launcher]:
    """The runtimes of this repository: funcwsgi as a container runs it and on every HTTP adapter, and nodejs26."""
    bin_dir = _python_bin()
    found = [Launcher("funcwsgi-gunicorn-app", "python314", "python", (str(bin_dir / "gunicorn"), "funcwsgi:app"))]
    found += [
        Launcher(f"funcwsgi-{adapter}", "python314", "python", (str(bin_dir / "funcwsgi"), "serve"), {"SERVER_ADAPTER": adapter})
        for adapter in FUNCWSGI_ADAPTERS
    ]
    # The default server spoken to over HTTP/2 (h2c with prior knowledge, as Knative's queue-proxy
    # speaks it when func.yaml asks for HTTP/2): every check's call is a stream.
    found.append(Launcher("funcwsgi-h2c", "python314", "python", (str(bin_dir / "funcwsgi"), "serve"), protocol="h2c"))
    # The event-loop path: the same fixtures written async def, on the servers' default settings.
    found.append(Launcher("funcwsgi-loop-gunicorn-app", "python314", "python-async", (str(bin_dir / "gunicorn"), "funcwsgi:app")))
    found += [
        Launcher(f"funcwsgi-loop{suffix}", "python314", "python-async", (str(bin_dir / "funcwsgi"), "serve"), env)
        for suffix, env in LOOP_ADAPTERS.items()
    ]
    found.append(Launcher("nodejs26", "nodejs26", "nodejs26", (str(REPO / "nodejs26" / "bin" / "serve"),)))
    found.append(Launcher("nodejs26-h2c", "nodejs26", "nodejs26", (str(REPO / "nodejs26" / "bin" / "serve"),), {"SERVER_HTTP2": "true"}, protocol="h2c"))
    return found


def command_launcher(command: str, language: str, runtime_name: str) -> Launcher:
    """A runtime from elsewhere: any command configured by the rework's environment variables."""
    words = tuple(shlex.split(command))
    if not words:
        raise ValueError("--runtime-command is empty")
    if language not in MODULE_FILES:
        raise ValueError(f"--runtime-language={language!r} is invalid: expected one of {', '.join(MODULE_FILES)}")
    program = words[0] if os.sep in words[0] else (shutil.which(words[0]) or words[0])
    return Launcher("external", runtime_name, language, (str(Path(program).resolve()), *words[1:]), cwd=Path.cwd())
