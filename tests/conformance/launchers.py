"""How the kit starts a runtime under test: a launcher per runtime.

A launcher knows a runtime's command, the environment it adds, where it runs
and which language its fixtures are written in. The kit hands it a fixture
and a set of settings (environment variables only, as the API rework wants
every runtime configured) and gets back a running process: its URL, its
stdout and stderr captured to files, SIGTERM, and its exit status. A
launch that is expected to fail (a bad value, a function that cannot load)
is run to its end instead.

Only the standard library and tests/support (standard library too): the kit must run anywhere.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..support.paths import REPO
from ..support.ports import KIT as PORTS
from ..support.processes import Server, run_to_exit

FIXTURES = Path(__file__).resolve().parent / "fixture"
#: How long a runtime may take to answer /healthz after it is started (a loaded machine, a cold Node).
START_TIMEOUT = 40.0
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


def clean_environment() -> dict[str, str]:
    """This process's environment without any runtime setting."""
    return {
        key: value for key, value in os.environ.items()
        if not key.startswith(_SETTING_PREFIXES) and key not in _SETTING_NAMES
    }


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

    def start(self, fixture: str | None, settings: Mapping[str, str], *, port: int | None = None, wait: bool = True) -> Server:
        """Start the runtime serving ``fixture`` on a free loopback port (or ``port``), with ``settings``.

        The port goes in ``SERVER_PORT`` unless ``settings`` name the port themselves
        (a compatibility name), in which case ``port`` must be given.
        """
        self.check_installed()
        chosen = port or PORTS.take()
        names_a_port = any(key in settings for key in ("SERVER_PORT", "FUNC_PORT", "PORT"))
        defaults = {"SERVER_HOST": "127.0.0.1"} if names_a_port else {"SERVER_HOST": "127.0.0.1", "SERVER_PORT": str(chosen)}
        running = Server(list(self.command), self.environment(fixture, {**defaults, **settings}), chosen, cwd=self.cwd)
        return running.started(timeout=START_TIMEOUT) if wait else running

    def run_to_exit(self, fixture: str | None, settings: Mapping[str, str], timeout: float = 40.0) -> subprocess.CompletedProcess[str]:
        """Run a launch that must end by itself (start-up errors); a runtime that serves instead is killed and fails."""
        self.check_installed()
        defaults = {"SERVER_HOST": "127.0.0.1", "SERVER_PORT": str(PORTS.take())}
        return run_to_exit(list(self.command), self.environment(fixture, {**defaults, **settings}), timeout, self.cwd)


def _python_bin() -> Path:
    return Path(sys.executable).parent


#: The HTTP servers funcwsgi runs on, each through `funcwsgi serve` with SERVER_ADAPTER.
FUNCWSGI_ADAPTERS = ("gunicorn", "waitress", "werkzeug", "granian")
#: The servers of funcwsgi's event-loop path (docs/async.md), by launcher-name suffix: `funcwsgi serve`
#: as it is (gunicorn with funcwsgi's edge worker) and granian's ASGI interface.
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
    # The same over HTTP/2 for the event-loop path: gunicorn's edge worker serves async def functions h2c too.
    found.append(Launcher("funcwsgi-loop-h2c", "python314", "python-async", (str(bin_dir / "funcwsgi"), "serve"), protocol="h2c"))
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
