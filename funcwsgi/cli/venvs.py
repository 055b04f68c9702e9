"""Virtual environments for ``funcwsgi run``, cached by the content of requirements.txt.

A function's environment holds what its ``requirements.txt`` lists, installed
with pip, and sees the funcwsgi runtime the CLI itself runs from through a
``.pth`` file (added after the install, so the function's own packages come
first). So the second ``run`` of an unchanged project starts at once, and a run
needs the network only for the function's own requirements.

The cache key is the requirements' bytes plus the interpreter and the funcwsgi
installation; concurrent runs wait on a lock file for the one creating it.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.util
import os
import subprocess
import sys
import sysconfig
import venv
from collections.abc import Callable
from pathlib import Path

from .. import __version__
from ..errors import StartupError

CACHE_ENV = "FUNCWSGI_CACHE_DIR"
_COMPLETE = ".complete"
_RUNTIME_PTH = "_funcwsgi_runtime.pth"


def cache_dir() -> Path:
    """``$FUNCWSGI_CACHE_DIR``, else ``$XDG_CACHE_HOME/funcwsgi``, else ``~/.cache/funcwsgi``."""
    configured = os.environ.get(CACHE_ENV)
    if configured:
        return Path(configured).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "funcwsgi"


def requirement_lines(requirements: Path) -> list[str]:
    if not requirements.is_file():
        return []
    lines = []
    for line in requirements_text(requirements).splitlines():
        line = line.split(" #", 1)[0].strip()
        if line and not line.startswith("#"):
            lines.append(line)
    return lines


def requirements_text(requirements: Path) -> str:
    """The file's text, or one line naming the file and what is wrong with it (pip reads it as UTF-8 too)."""
    try:
        raw = requirements.read_bytes()
    except OSError as error:
        raise StartupError(f"{requirements} cannot be read: {error.strerror}") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw.count(b"\n", 0, error.start) + 1
        raise StartupError(
            f"{requirements} line {line} is not UTF-8 (byte {raw[error.start]:#04x} at offset {error.start}): expected a UTF-8 text file; save it as UTF-8"
        ) from None


def cache_key(requirements: Path) -> str:
    digest = hashlib.sha256()
    digest.update(requirements.read_bytes() if requirements.is_file() else b"")
    # Requirements may name files next to them (-r other.txt, ./wheels/x.whl): the folder matters too.
    digest.update(str(requirements.parent.resolve()).encode() if requirement_lines(requirements) else b"")
    for part in (os.path.realpath(sys.executable), sys.version, runtime_location(), __version__):
        digest.update(b"\0" + part.encode())
    return digest.hexdigest()[:16]


def runtime_location() -> str:
    """The folder the running funcwsgi package is imported from."""
    return str(Path(__file__).resolve().parents[2])


_RUNTIME_PACKAGES = ("werkzeug", "gunicorn", "yaml")


def _location(package: str) -> str:
    """The folder ``package`` is imported from, or the runtime's own when it is not installed."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.origin:
        return runtime_location()
    return str(Path(spec.origin).resolve().parent.parent)


def python_of(environment: Path) -> Path:
    return environment / "bin" / "python"


def prepare(requirements: Path, *, progress: Callable[[str], None]) -> Path:
    """The cached environment for ``requirements``, created (with progress lines) if missing."""
    root = cache_dir() / "venvs"
    root.mkdir(parents=True, exist_ok=True)
    key = cache_key(requirements)
    environment = root / key
    if (environment / _COMPLETE).exists():
        return environment
    with open(root / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another run may be creating this very environment
        if (environment / _COMPLETE).exists():
            return environment
        _create(environment, requirements, progress)
        (environment / _COMPLETE).write_text(str(requirements) + "\n")
    return environment


def _create(environment: Path, requirements: Path, progress: Callable[[str], None]) -> None:
    lines = requirement_lines(requirements)
    progress(f"Creating a virtual environment in {environment} ...")
    use_own_pip = importlib.util.find_spec("pip") is not None
    venv.EnvBuilder(clear=True, symlinks=True, with_pip=bool(lines) and not use_own_pip).create(environment)
    if lines:
        progress(f"Installing {len(lines)} requirement(s) from {requirements} ...")
        if use_own_pip:
            command = [sys.executable, "-m", "pip", "--python", str(python_of(environment))]
        else:
            command = [str(python_of(environment)), "-m", "pip"]
        command += ["install", "--disable-pip-version-check", "-r", str(requirements)]
        result = subprocess.run(command, cwd=requirements.parent, stdout=sys.stderr, stderr=sys.stderr)
        if result.returncode != 0:
            raise StartupError(
                f"installing {requirements} failed (pip exited with {result.returncode}); fix the requirement pip names above and run again"
            )
    _link_runtime(environment)


def _link_runtime(environment: Path) -> None:
    """Make the runtime the CLI runs from importable in ``environment``, after its own packages."""
    python = str(python_of(environment))
    result = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], capture_output=True, text=True, check=True)
    pth = Path(result.stdout.strip()) / _RUNTIME_PTH
    folders = [*(_location(name) for name in _RUNTIME_PACKAGES), sysconfig.get_path("purelib")]
    # addsitedir (unlike a plain path line) also reads the folder's own .pth files,
    # which is how editable installs make their packages importable.
    for candidates in (folders, [*folders, runtime_location()]):
        unique = list(dict.fromkeys(os.path.realpath(path) for path in candidates))
        pth.write_text("import site; " + "; ".join(f"site.addsitedir({path!r})" for path in unique) + "\n")
        if subprocess.run([python, "-c", "import funcwsgi"], capture_output=True).returncode == 0:
            return
    raise StartupError(f"the funcwsgi runtime at {runtime_location()} cannot be imported by {python}; reinstall funcwsgi")
