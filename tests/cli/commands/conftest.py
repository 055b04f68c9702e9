"""Running the ``funcwsgi`` CLI as a real process, in throw-away projects."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from funcwsgi.cli import main

from ...support.processes import FUNCWSGI, base_env


@pytest.fixture(scope="session")
def venv_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One virtual-environment cache for the whole session: runs of unchanged requirements reuse it."""
    return tmp_path_factory.mktemp("venv-cache")


@pytest.fixture
def cli_env(venv_cache: Path) -> dict[str, str]:
    return base_env(FUNCWSGI_CACHE_DIR=str(venv_cache))


@pytest.fixture
def cli(cli_env: dict[str, str]):
    """``cli("create", "hello", cwd=tmp_path)``: run funcwsgi to its end and return the completed process."""

    def run(*args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*FUNCWSGI, *args], cwd=cwd, env={**cli_env, **(env or {})}, capture_output=True, text=True, timeout=timeout
        )

    return run


@pytest.fixture
def project(cli, tmp_path: Path) -> Path:
    """A freshly created http function project."""
    result = cli("create", "hello", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    return tmp_path / "hello"


@pytest.fixture
def call(capsys: pytest.CaptureFixture[str]) -> Callable[..., tuple[int, str, str]]:
    """``call("create", "x")``: the CLI in this process, for what ends before any server starts; (status, stdout, stderr)."""

    def run(*args: str) -> tuple[int, str, str]:
        try:
            status = main(list(args))
        except SystemExit as exit:  # argparse's own errors
            status = int(exit.code or 0)
        captured = capsys.readouterr()
        return status, captured.out, captured.err

    return run
