"""What the harness needs besides the project's own environment: wrk, and the alternatives' venv."""

from __future__ import annotations

import compileall
import hashlib
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BENCH = REPO / "bench"
ALTERNATIVES_REQUIREMENTS = BENCH / "alternatives" / "requirements.txt"
APT_LOCK = "/tmp/funcwsgi-apt.lock"


class SetupError(RuntimeError):
    """Something the benchmark needs is missing and cannot be installed here."""


def cache_dir() -> Path:
    """Where the harness keeps its virtual environment (``BENCH_CACHE``, default ``.bench-cache``)."""
    path = Path(os.environ.get("BENCH_CACHE") or REPO / ".bench-cache")
    path.mkdir(parents=True, exist_ok=True)
    return path


def ensure_wrk() -> str:
    """The path of wrk, installed from Debian with apt-get when missing (as root)."""
    found = shutil.which("wrk")
    if found:
        return found
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        raise SetupError("wrk is not installed; install the Debian package 'wrk' (apt-get install wrk)")
    print("bench: installing wrk with apt-get", file=sys.stderr)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = ["apt-get", "install", "-y", "-qq", "--no-install-recommends", "wrk"]
    if shutil.which("flock"):  # other users of this machine install packages too
        install = ["flock", APT_LOCK, *install]
    if subprocess.run(install, env=env, capture_output=True).returncode != 0:
        subprocess.run(["apt-get", "update", "-qq"], env=env, check=False, capture_output=True)
        result = subprocess.run(install, env=env, capture_output=True, text=True)
        if result.returncode != 0:
            raise SetupError(f"could not install wrk with apt-get: {result.stderr.strip()[-300:]}")
    found = shutil.which("wrk")
    if not found:
        raise SetupError("apt-get installed wrk but it is not on PATH")
    return found


def alternatives_python() -> Path:
    """The Python of a virtual environment holding functions-framework, bottle and cheroot.

    Rebuilt when ``bench/alternatives/requirements.txt`` changes.
    """
    return venv_python("alternatives-venv", ALTERNATIVES_REQUIREMENTS)


def venv_python(name: str, requirements: Path) -> Path:
    """The Python of the virtual environment ``name`` in the cache, holding ``requirements``; rebuilt when they change."""
    venv = cache_dir() / name
    python = venv / "bin" / "python"
    stamp = venv / ".requirements-sha256"
    wanted = hashlib.sha256(requirements.read_bytes()).hexdigest()
    if python.exists() and stamp.exists() and stamp.read_text() == wanted:
        return python
    print(f"bench: creating {venv} for {requirements.relative_to(REPO)}", file=sys.stderr)
    shutil.rmtree(venv, ignore_errors=True)
    steps = [
        [sys.executable, "-m", "venv", str(venv)],
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "-r", str(requirements)],
    ]
    for step in steps:
        result = subprocess.run(step, capture_output=True, text=True)
        if result.returncode != 0:
            raise SetupError(f"{' '.join(step)} failed:\n{result.stderr.strip()[-2000:]}")
    stamp.write_text(wanted)
    return python


NODE_ALTERNATIVE = BENCH / "alternatives" / "kyma_nodejs26"


def node_binary() -> Path:
    """The project's own Node 26 (``make setup`` puts it in .tools/node; ``FUNCWSGI_NODE`` overrides)."""
    path = Path(os.environ.get("FUNCWSGI_NODE") or REPO / ".tools" / "node" / "node_modules" / ".bin" / "node")
    if not path.exists():
        raise SetupError(f"Node 26 is not installed at {path}; run `make setup`")
    return path


def node_alternatives() -> Path:
    """bench/alternatives/kyma_nodejs26 with its node_modules, installed with `npm ci` when its lockfile changes."""
    lock = NODE_ALTERNATIVE / "package-lock.json"
    stamp = NODE_ALTERNATIVE / "node_modules" / ".lock-sha256"
    wanted = hashlib.sha256(lock.read_bytes()).hexdigest()
    if stamp.exists() and stamp.read_text() == wanted:
        return NODE_ALTERNATIVE
    node = node_binary()
    print(f"bench: installing {NODE_ALTERNATIVE.relative_to(REPO)} with npm ci", file=sys.stderr)
    env = {**os.environ, "PATH": f"{node.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    result = subprocess.run(
        [str(node.parent / "npm"), "ci", "--no-audit", "--no-fund", "--loglevel=error"],
        cwd=NODE_ALTERNATIVE, env=env, capture_output=True, text=True,
    )
    if result.returncode != 0:
        raise SetupError(f"npm ci in {NODE_ALTERNATIVE} failed:\n{result.stderr.strip()[-2000:]}")
    stamp.write_text(wanted)
    return NODE_ALTERNATIVE


def missing_modules(names: list[str]) -> list[str]:
    """Which of the modules ``names`` the project's environment (this interpreter) lacks."""
    import importlib.util

    return [name for name in names if importlib.util.find_spec(name) is None]


def compile_sources(repo: Path = REPO) -> None:
    """Byte-compile ``repo``'s own packages and the virtual environment's, as an installed package is.

    The repository's packages are an editable install, and ``make run``
    installs the others with ``--no-compile``; with ``PYTHONDONTWRITEBYTECODE``
    set every server start would compile from source whatever it imports
    (gunicorn, werkzeug, OpenTelemetry, ...), which no production install does
    (the runtime image and the function images compile them at build time),
    and which weighs most on the server that imports most.
    """
    folders = [repo / package for package in ("funcwsgi", "sdk")]
    folders += sorted({Path(sysconfig.get_path(name)) for name in ("purelib", "platlib")})
    for folder in folders:
        # One process: with a pool (workers=0) looking over an already compiled venv took 12.9 s, not 1.2 s.
        if not compileall.compile_dir(str(folder), quiet=1):
            raise SetupError(f"could not byte-compile {folder}")
