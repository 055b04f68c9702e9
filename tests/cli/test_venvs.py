"""Virtual environments for `funcwsgi run`: made once per requirements content, then reused."""

from __future__ import annotations

import base64
import hashlib
import subprocess
import threading
import zipfile
from pathlib import Path

import pytest

from funcwsgi.cli import venvs
from funcwsgi.errors import StartupError


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(venvs.CACHE_ENV, str(tmp_path / "cache"))
    return tmp_path / "cache"


def make_wheel(folder: Path, name: str = "greeting", version: str = "1.0") -> Path:
    """A minimal pure-Python wheel, so installing a requirement needs no network."""
    files = {
        f"{name}/__init__.py": b"WORD = 'hello from a requirement'\n",
        f"{name}-{version}.dist-info/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode(),
        f"{name}-{version}.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = []
    for path, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(data)}")
    record.append(f"{name}-{version}.dist-info/RECORD,,")
    wheel = folder / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, data in files.items():
            archive.writestr(path, data)
        archive.writestr(f"{name}-{version}.dist-info/RECORD", "\n".join(record) + "\n")
    return wheel


def run_python(environment: Path, code: str) -> str:
    result = subprocess.run([str(venvs.python_of(environment)), "-c", code], capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_empty_requirements_reuse_one_environment(cache: Path, tmp_path: Path):
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("# nothing yet\n")
    messages: list[str] = []
    environment = venvs.prepare(requirements, progress=messages.append)
    assert environment.parent == cache / "venvs"
    assert len(messages) == 1 and messages[0].startswith("Creating a virtual environment")
    assert run_python(environment, "import funcwsgi, werkzeug, sys; print(funcwsgi.__file__, sys.prefix)").endswith(str(environment))
    again: list[str] = []
    assert venvs.prepare(requirements, progress=again.append) == environment
    assert again == [], "the second run starts at once"


@pytest.mark.slow("creates two fresh virtual environments and pip-installs a wheel into each")
def test_requirements_are_installed_and_come_first(cache: Path, tmp_path: Path):
    wheel = make_wheel(tmp_path)
    requirements = tmp_path / "requirements.txt"
    requirements.write_text(f"{wheel}  # a local wheel\n")
    messages: list[str] = []
    environment = venvs.prepare(requirements, progress=messages.append)
    assert any("Installing 1 requirement(s)" in message for message in messages)
    assert run_python(environment, "import greeting; print(greeting.WORD)") == "hello from a requirement"
    path = run_python(environment, "import sys; print(sys.path)")
    assert path.index(str(environment)) < path.index(venvs.runtime_location()), "the function's packages win"
    requirements.write_text(f"{wheel}\n")
    assert venvs.prepare(requirements, progress=messages.append) != environment, "new content, new environment"


def test_a_failing_install_is_one_line_and_not_cached(cache: Path, tmp_path: Path):
    requirements = tmp_path / "requirements.txt"
    requirements.write_text(f"{tmp_path / 'missing-1.0-py3-none-any.whl'}\n")
    with pytest.raises(venvs.StartupError, match=r"installing .*requirements.txt failed \(pip exited with 1\); fix the requirement pip names above"):
        venvs.prepare(requirements, progress=lambda message: None)
    assert not list((cache / "venvs").glob("*/.complete"))


def test_concurrent_runs_create_it_once(cache: Path, tmp_path: Path):
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("")
    messages: list[str] = []
    results: list[Path] = []
    threads = [threading.Thread(target=lambda: results.append(venvs.prepare(requirements, progress=messages.append))) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(results)) == 1 and len(results) == 3
    assert len(messages) == 1


def test_requirements_that_are_not_utf8_are_one_line_naming_the_line_and_byte(tmp_path: Path):
    requirements = tmp_path / "requirements.txt"
    requirements.write_bytes(b"requests\n# caf\xe9\n")
    with pytest.raises(StartupError) as caught:
        venvs.requirement_lines(requirements)
    assert str(caught.value) == f"{requirements} line 2 is not UTF-8 (byte 0xe9 at offset 14): expected a UTF-8 text file; save it as UTF-8"
