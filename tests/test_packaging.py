"""The package as a user gets it: the wheel built from this tree, installed by the pip Python bundles.

Python 3.11 bundles pip 23.2, whose resolver gives up on dependency sets a
current pip resolves; ``make setup`` and a user's ``pip install funcwsgi`` both
use whatever pip there is, so the wheel must install with the bundled one, not
only with the newest.
"""

from __future__ import annotations

import configparser
import ensurepip
import importlib.metadata
import os
import re
import subprocess
import venv
from pathlib import Path

import pytest

from .support.paths import REPO

#: What setuptools prints when the package configuration is off (data folders taken for packages, ...).
SETUPTOOLS_WARNING = re.compile(r"would be ignored|Setuptools\w*Warning|^\s*warning: ", re.MULTILINE)

pytestmark = pytest.mark.slow("builds the wheel and installs it, with pip, into fresh virtual environments")


def fresh_venv(folder: Path) -> Path:
    """A new virtual environment of the interpreter the tests run on, with the pip it bundles."""
    venv.EnvBuilder(with_pip=True, clear=True).create(folder)
    return folder / "bin" / "python"


def pip(python: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("PIP_") or key == "PIP_CERT"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # else setuptools notes that it skips byte-compiling
    return subprocess.run(
        [str(python), "-m", "pip", "--disable-pip-version-check", *args], env=env, capture_output=True, text=True, timeout=timeout
    )


@pytest.fixture(scope="module")
def bundled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return fresh_venv(tmp_path_factory.mktemp("bundled-pip") / "venv")


@pytest.fixture(scope="module")
def wheel(bundled: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("wheel")
    built = pip(bundled, "wheel", "--verbose", "--no-deps", "--wheel-dir", str(out), str(REPO))
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    (found,) = out.glob("funcwsgi-*.whl")
    return found, built.stdout + built.stderr


def test_the_venv_has_the_bundled_pip(bundled: Path):
    assert pip(bundled, "--version").stdout.split()[1] == ensurepip.version()


def test_the_wheel_builds_without_warnings(wheel: tuple[Path, str]):
    _, output = wheel
    assert SETUPTOOLS_WARNING.findall(output) == [], [line for line in output.splitlines() if SETUPTOOLS_WARNING.search(line)]


@pytest.fixture(scope="module")
def installed(bundled: Path, wheel: tuple[Path, str]) -> Path:
    """The bundled pip's venv with the wheel installed."""
    path, _ = wheel
    done = pip(bundled, "install", "--quiet", str(path), timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return bundled


def test_the_bundled_pip_installs_the_wheel_and_it_imports(installed: Path):
    bundled = installed
    code = (
        "import funcwsgi, sdk, funcwsgi.adapters, funcwsgi.cli.scaffolding as s\n"
        "assert funcwsgi.__file__.startswith(sys.prefix), funcwsgi.__file__\n"
        "assert (s.DEFAULT_SCAFFOLDING / 'service.py').is_file() and (s.TEMPLATES / 'http' / 'handler.py').is_file()\n"
        # The public names of modules that live in a wing or in funcwsgi/adapters/ (docs/architecture.md).
        "from funcwsgi.testing import FunctionClient\n"
        "assert FunctionClient.__module__ == 'funcwsgi.devtools.function_client'\n"
        "import funcwsgi.gunicorn_conf as conf\n"
        "assert len(conf.bind) == 1 and callable(conf.post_fork), conf.bind\n"
        "print(funcwsgi.make_app(lambda req, res: res.set_body('hi')).layers[-1])"
    )
    result = subprocess.run([str(bundled), "-c", "import sys\n" + code], capture_output=True, text=True, cwd="/", timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "function"
    version = subprocess.run([str(bundled.parent / "funcwsgi"), "--version"], capture_output=True, text=True, timeout=60)
    assert version.stdout.strip() == f"funcwsgi {funcwsgi_version()}"


#: The worker classes the docs tell users to name (`gunicorn -k ...`).
WORKER_CLASS = re.compile(r"funcwsgi\.adapters\.[a-z_.]+\.[A-Z]\w*Worker")


def test_the_names_users_type_resolve_in_the_installed_package(installed: Path):
    pages = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    workers = sorted({name for page in pages for name in WORKER_CLASS.findall(page.read_text())})
    assert "funcwsgi.adapters.gunicorn.worker.HttpEdgeWorker" in workers
    code = (
        "import sys, gunicorn.util\n"
        "import funcwsgi.gunicorn_conf as conf\n"
        "assert conf.worker_class == 'funcwsgi.adapters.gunicorn.worker.HttpEdgeWorker', conf.worker_class\n"
        "for name in sys.argv[1:]:\n"
        "    loaded = gunicorn.util.load_class(name)\n"
        "    assert sys.modules[loaded.__module__].__file__.startswith(sys.prefix), name\n"
        "print(len(sys.argv) - 1)"
    )
    result = subprocess.run([str(installed), "-c", code, *workers], capture_output=True, text=True, cwd="/", timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [str(len(workers))]


def stand_in_wheel(folder: Path) -> Path:
    """A wheel of a distribution named ``adapters`` with a top-level ``adapters`` package, as the index's has.

    Made by hand: the real one pulls in a machine-learning stack.
    """
    import base64
    import hashlib
    import zipfile

    files = {
        "adapters/__init__.py": 'KIND = "stand-in"\n',
        "adapters-0.0.1.dist-info/METADATA": "Metadata-Version: 2.1\nName: adapters\nVersion: 0.0.1\n",
        "adapters-0.0.1.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: funcwsgi-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = []
    for name, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(text.encode())}")
    files["adapters-0.0.1.dist-info/RECORD"] = "\n".join([*record, "adapters-0.0.1.dist-info/RECORD,,"]) + "\n"
    path = folder / "adapters-0.0.1-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return path


def test_a_distribution_named_adapters_installs_beside_funcwsgi_and_both_import(installed: Path, tmp_path: Path):
    stand_in_wheel(tmp_path)
    added = pip(installed, "install", "--quiet", "--no-index", "--find-links", str(tmp_path), "adapters")
    assert added.returncode == 0, added.stdout[-3000:] + added.stderr[-3000:]
    code = (
        "import sys, importlib.metadata as m\n"
        "import adapters, funcwsgi.adapters, funcwsgi.gunicorn_conf\n"
        "from funcwsgi.adapters import host_port\n"
        "assert adapters.KIND == 'stand-in' and adapters.__file__.startswith(sys.prefix), adapters.__file__\n"
        "assert funcwsgi.adapters.__file__.startswith(sys.prefix), funcwsgi.adapters.__file__\n"
        # The distribution installs funcwsgi and sdk only (and its console script): no folder another one owns.
        "tops = {f.parts[0] for f in m.distribution('funcwsgi').files if not f.parts[0].endswith('.dist-info') and f.parts[0] != '..'}\n"
        "print(' '.join(sorted(tops)))"
    )
    result = subprocess.run([str(installed), "-c", code], capture_output=True, text=True, cwd="/", timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["funcwsgi", "sdk"]


def test_a_current_pip_resolves_the_wheel_too(tmp_path: Path, wheel: tuple[Path, str]):
    path, _ = wheel
    python = fresh_venv(tmp_path / "venv")
    upgraded = pip(python, "install", "--quiet", "--upgrade", "pip")
    assert upgraded.returncode == 0, upgraded.stderr
    assert int(pip(python, "--version").stdout.split()[1].split(".")[0]) >= 24
    resolved = pip(python, "install", "--dry-run", "--quiet", str(path), timeout=900)
    assert resolved.returncode == 0, resolved.stdout[-3000:] + resolved.stderr[-3000:]


def funcwsgi_version() -> str:
    import funcwsgi

    return funcwsgi.__version__


def make_dry_run(target: str, tmp_path: Path) -> str:
    """What ``make TARGET`` would run on a fresh clone (a venv not made yet), without running it."""
    result = subprocess.run(
        ["make", "--dry-run", "--always-make", "-C", str(REPO), target, f"VENV={tmp_path / '.venv'}", f"NODE_DIR={tmp_path / 'node'}"],
        capture_output=True, text=True, timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_make_run_installs_the_package_and_nothing_else(tmp_path: Path):
    commands = make_dry_run("run", tmp_path)
    assert "-e ." in commands and "funcwsgi serve" in commands
    for other in ("apt-get", "npm", "node", "[test", "ensurepip", "EXTRAS"):
        assert other not in commands, f"`make run` runs {other!r}:\n{commands}"
    everything = make_dry_run("setup", tmp_path)
    assert "npm" in everything and "-e '.[test,docs,waitress,granian]'" in everything and "apt-get" in everything


#: The servers funcwsgi runs on, what they need for HTTP/2 and the edge's parser and loop, and what the benchmarks compare with.
SERVERS = ("gunicorn", "h2", "httptools", "uvloop", "uvicorn", "uvicorn-worker", "waitress", "granian")


def requirement_lines() -> list[str]:
    parser = configparser.ConfigParser()
    parser.read(REPO / "setup.cfg")
    groups = [parser["options"]["install_requires"], *parser["options.extras_require"].values()]
    return [line.strip() for group in groups for line in group.splitlines() if line.strip() and not line.strip().startswith("#")]


@pytest.mark.parametrize("server", SERVERS)
def test_each_server_is_required_alike_everywhere_from_the_release_the_tests_run_on(server: str):
    named = {line for line in requirement_lines() if re.split(r"[<>=\[ ]", line, maxsplit=1)[0] == server}
    assert len(named) == 1, f"setup.cfg names {server} with different bounds: {sorted(named)}"
    lowest = re.search(r">=([\w.]+)", named.pop())
    assert lowest, f"setup.cfg names {server} without a lower bound"
    installed = importlib.metadata.version(server)
    assert tuple(map(int, installed.split("."))) >= tuple(map(int, lowest.group(1).split("."))), f"{server} {installed} is below setup.cfg's {lowest.group(1)}"
