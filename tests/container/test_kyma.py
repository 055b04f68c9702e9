"""The runtime image run exactly as Kyma's Function controller runs a Python runtime image.

What the controller does is read from kyma-project/serverless,
``components/buildless-serverless/internal/controller/resources/deployment.go``
(``podSpec``, ``runtimeCommand``, ``generalEnvs``, ``sourceEnvs``,
``volumeMounts``, the security contexts): the container's command is
``sh -c <runtimeCommand>`` in the working directory ``/kubeless`` (an
emptyDir), which writes the inline source to ``handler.py``, installs
``requirements.txt`` with ``pip install --target=/kubeless/.local`` (put on
``PYTHONPATH``; pip reads ``package-registry-config/pip.conf``, an optional
secret) and then runs ``cd ..`` and ``python server.py``. It injects
``FUNCTION_PATH=/kubeless``, ``MOD_NAME=handler``, ``FUNC_HANDLER=main`` and
the function's metadata, runs as user and group 1000 with a read-only root
filesystem and all capabilities dropped, mounts emptyDirs at ``/tmp`` and
``/.local``, and probes ``/healthz`` on port 8080.

The container gets no network (``--network none``): the function is called
from inside it on 127.0.0.1:8080, the port the controller's Service targets,
and its dependency comes from a local folder the pip.conf names, as a
private package registry configured through that secret would.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from funcwsgi.config import known_env_names

from ..support.logs import log_records
from .conftest import Docker

pytestmark = pytest.mark.slow("builds images and runs containers on a docker daemon of the tests' own")

SOURCE = """import os

import six


def main(event, context):
    return {
        "six": six.__version__,
        "six_from": os.path.dirname(six.__file__),
        "function": context["function-name"],
        "cwd": os.getcwd(),
        "uid": os.getuid(),
    }
"""
DEPENDENCIES = "six==1.17.0"


def runtime_command(dependencies: str) -> str:
    """``runtimeCommand(f)`` of the controller for a Function with inline sources on a Python runtime."""
    sources = ['echo "" > requirements.txt;', 'echo "${FUNC_HANDLER_SOURCE}" > handler.py;']
    if dependencies:
        sources.append('echo "${FUNC_HANDLER_DEPENDENCIES}" > requirements.txt;')
    install = (
        'export PYTHONPATH="/kubeless/.local:${PYTHONPATH}"\n'
        "PIP_CONFIG_FILE=package-registry-config/pip.conf pip install --target=/kubeless/.local --no-cache-dir -r requirements.txt;"
    )
    start = 'cd ..;\nif [ -f "./kubeless.py" ]; then\n  # old file location support\n  python kubeless.py;\nelse\n  python server.py;\nfi'
    return "\n".join(["set -e;", "\n".join(sources), install, start])


def pod_env(name: str, namespace: str) -> dict[str, str]:
    """``generalEnvs`` then ``sourceEnvs``, in the controller's order, for a python Function without tracing or eventing."""
    return {
        "FUNC_NAME": name,
        "FUNC_RUNTIME": "python312",
        "SERVICE_NAMESPACE": namespace,
        "TRACE_COLLECTOR_ENDPOINT": "",
        "PUBLISHER_PROXY_ADDRESS": "",
        "PYTHONUNBUFFERED": "TRUE",
        "MOD_NAME": "handler",
        "FUNC_HANDLER": "main",
        "FUNC_HANDLER_SOURCE": SOURCE,
        "FUNC_HANDLER_DEPENDENCIES": DEPENDENCIES,
        "FUNCTION_PATH": "/kubeless",
    }


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A package folder with the function's dependency and the pip.conf that points at it."""
    folder = tmp_path_factory.mktemp("registry")
    wheels = folder / "wheels"
    result = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--dest", str(wheels), DEPENDENCIES],
        capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    (folder / "pip.conf").write_text("[global]\nno-index = true\nfind-links = /registry/wheels\n")
    folder.chmod(0o755)
    return folder


def in_container(docker: Docker, name: str, path: str) -> tuple[int, str]:
    """GET http://127.0.0.1:8080{path} from inside the container: (status, body), or (0, why)."""
    script = (
        "import sys, urllib.request, urllib.error\n"
        "try:\n"
        f"    r = urllib.request.urlopen('http://127.0.0.1:8080{path}', timeout=5); print(r.status); print(r.read().decode())\n"
        "except urllib.error.HTTPError as e:\n    print(e.code); print(e.read().decode())\n"
        "except OSError as e:\n    print(0); print(e)\n"
    )
    result = docker("exec", name, "python", "-c", script, check=False, timeout=60)
    status, _, body = result.stdout.partition("\n")
    return (int(status), body.strip()) if status.isdigit() else (0, result.stdout + result.stderr)


def wait_serving(docker: Docker, name: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if in_container(docker, name, "/healthz")[0] == 200:  # the controller's startup, readiness and liveness probe
            return
        if docker("inspect", "--format", "{{.State.Running}}", name, check=False).stdout.strip() == "false":
            break
        time.sleep(0.3)
    logs = docker("logs", name, check=False)
    raise AssertionError(f"{name} never answered /healthz\n{logs.stdout}\n{logs.stderr}")


def empty_dirs(root: Path, volumes: dict[str, str]) -> list[str]:
    """emptyDir volumes: empty folders the pod's fsGroup (1000) may write, one ``--volume`` each."""
    arguments = []
    for volume, mount_path in volumes.items():
        folder = root / volume
        folder.mkdir()
        os.chown(folder, 1000, 1000)
        folder.chmod(0o2775)
        arguments += ["--volume", f"{folder}:{mount_path}"]
    return arguments


def test_the_image_serves_a_function_as_kymas_controller_runs_it(docker: Docker, runtime_image: str, registry: Path, tmp_path: Path):
    name = "funcwsgi-test-kyma"
    env = [item for key, value in pod_env("shop-orders", "shop").items() for item in ("--env", f"{key}={value}")]
    docker(
        "run", "--detach", "--name", name, "--network", "none",
        "--user", "1000:1000", "--group-add", "1000", "--read-only", "--cap-drop", "ALL", "--security-opt", "no-new-privileges",
        "--workdir", "/kubeless",
        *empty_dirs(tmp_path, {"sources": "/kubeless", "tmp": "/tmp", "local": "/.local"}),
        "--volume", f"{registry / 'pip.conf'}:/kubeless/package-registry-config/pip.conf:ro",  # the optional secret
        "--volume", f"{registry}:/registry:ro",
        *env,
        "--entrypoint", "sh", runtime_image, "-c", runtime_command(DEPENDENCIES),
    )
    try:
        wait_serving(docker, name)
        status, body = in_container(docker, name, "/")
        assert status == 200, body
        assert json.loads(body) == {"six": "1.17.0", "six_from": "/kubeless/.local", "function": "shop-orders", "cwd": "/", "uid": 1000}
        logs = docker("logs", name)
        started = [line for line in logs.stdout.splitlines() if not line.startswith("{")]
        assert "Importing function sources from /kubeless/handler.py:main" in started
        assert started[-1] == "Starting python312 server 0.0.0.0:8080", started
        # gunicorn's control socket, were it on, would log an ERROR here: the read-only root has no room for it.
        # `funcwsgi serve` writes gunicorn's lines as records on stdout (logger gunicorn.error), not on stderr.
        records = log_records(logs.stdout)
        assert any(record["logger"] == "gunicorn.error" and record["message"].startswith("Booting worker") for record in records), logs.stdout
        assert [record for record in records if record["level"] in ("ERROR", "CRITICAL")] == [], logs.stdout
        assert "[ERROR]" not in logs.stderr, logs.stderr
    finally:
        docker("rm", "--force", name, check=False)


def test_the_image_sets_no_setting_that_outranks_the_injected_names(docker: Docker, runtime_image: str):
    config = json.loads(docker("inspect", "--format", "{{json .Config}}", runtime_image).stdout)
    assert not {entry.split("=", 1)[0] for entry in config["Env"]} & known_env_names()
    for injected, folder in (("FUNCTION_PATH=/kubeless", "/kubeless"), ("HANDLER_PATH=/srv/function", "/srv/function")):
        shown = docker("run", "--rm", "--network", "none", "--env", injected, "--entrypoint", "funcwsgi", runtime_image, "settings", check=False, timeout=120)
        assert f"\nHANDLER_FOLDER={folder}\n" in shown.stdout, shown.stdout + shown.stderr
    plain = docker("run", "--rm", "--network", "none", "--entrypoint", "funcwsgi", runtime_image, "settings", check=False, timeout=120)
    assert "\nHANDLER_FOLDER=/function\n" in plain.stdout, "with nothing injected, the image's own folder"
    assert "\nSERVER_PORT=8080\n" in plain.stdout and "\nSERVER_HOST=0.0.0.0\n" in plain.stdout
    with_port = docker("run", "--rm", "--network", "none", "--env", "PORT=9000", "--entrypoint", "funcwsgi", runtime_image, "settings", check=False, timeout=120)
    assert "\nSERVER_PORT=9000\n" in with_port.stdout, "a platform's PORT is honoured"


#: The import name of each package Kyma's Python runtime images install for every function (image/kyma-requirements.txt).
KYMA_RUNTIME_MODULES = [
    "setuptools", "requests", "bottle", "cheroot", "requestlogger", "prometheus_client", "flask", "gevent",
    "opentelemetry.trace", "opentelemetry.sdk.trace", "opentelemetry.exporter.otlp.proto.http.trace_exporter",
    "opentelemetry.propagators.b3", "opentelemetry.instrumentation.requests", "cloudevents",
]


def test_kymas_runtime_packages_import_in_the_image_without_dependencies(docker: Docker, runtime_image: str):
    """What Kyma's test functions import without listing it (its tracing function: requests and RequestsInstrumentor)."""
    imports = "; ".join(f"import {module}" for module in KYMA_RUNTIME_MODULES)
    tracing = "from opentelemetry.instrumentation.requests import RequestsInstrumentor; RequestsInstrumentor().instrument()"
    result = docker("run", "--rm", "--network", "none", "--entrypoint", "python", runtime_image, "-c", f"{imports}; {tracing}; print('imported')",
                    check=False, timeout=120)
    assert result.stdout.strip() == "imported", result.stdout + result.stderr
