"""The runtime image and a function image built by `funcwsgi build`, run by a real docker.

Run with `make test-container` (see conftest.py for the daemon and the base image).
"""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

import pytest
import requests

from funcwsgi import __version__
from funcwsgi.cli.scaffolding import RUNTIME_IMAGE
from funcwsgi.config import known_env_names

from ..support.paths import FUNCTIONS
from ..support.ports import free_port
from ..support.processes import FUNCWSGI, Server, base_env
from .conftest import Docker, engine_env, image_project, run_container, server_uid

pytestmark = pytest.mark.slow("builds images and runs containers on a docker daemon of the tests' own")


def test_runtime_image_serves_a_mounted_function(docker: Docker, runtime_image: str):
    name = "funcwsgi-test-runtime"
    url = run_container(docker, runtime_image, name, "--volume", f"{FUNCTIONS / 'req_res'}:/function:ro")
    try:
        assert requests.get(url + "/code").status_code == 201
        assert requests.post(url + "/json", json={"a": 1}).json() == {"ok": True, "echo": {"a": 1}}
        assert requests.get(url + "/healthz").text == "OK"
        for method in ("GET", "POST", "PUT", "DELETE"):
            assert requests.request(method, url + "/any").text == f"{method} /any"
        lines = docker("logs", name).stdout.splitlines()
        port = url.rsplit(":", 1)[1]
        assert lines[:4] == [
            "Importing function sources from /function/handler.py:main",
            "Tracing disabled: TRACE_COLLECTOR_ENDPOINT is not set",
            "Publisher Proxy not configured: PUBLISHER_PROXY_ADDRESS is not set",
            f"Starting python314 server 127.0.0.1:{port}",
        ]
        assert server_uid(docker, name) == 10001, "the server does not run as root"
        config = json.loads(docker("inspect", "--format", "{{json .Config}}", runtime_image).stdout)
        assert "8080/tcp" in config["ExposedPorts"]
        set_by_image = {entry.split("=", 1)[0] for entry in config["Env"]} & known_env_names()
        assert not set_by_image, f"the image sets {set_by_image}: they would outrank the names platforms inject"
    finally:
        docker("rm", "--force", name, check=False)


def test_plain_gunicorn_in_the_runtime_image_applies_the_server_settings(docker: Docker, runtime_image: str):
    # The image sets GUNICORN_CMD_ARGS, gunicorn's own variable: `gunicorn funcwsgi:app` needs no flag.
    name = "funcwsgi-test-plain-gunicorn"
    url = run_container(
        docker, runtime_image, name, "--env", "SERVER_NUMTHREADS=3", "--volume", f"{FUNCTIONS / 'req_res'}:/function:ro",
        "--entrypoint", "gunicorn", command=("funcwsgi:app",),
    )
    try:
        assert requests.get(url + "/code").status_code == 201
        logs = docker("logs", name)
        assert f"Starting python314 server {url.removeprefix('http://')}" in logs.stdout.splitlines()
        assert "Using worker: funcwsgi.adapters.gunicorn.worker.HttpEdgeWorker" in logs.stderr
        assert "funcwsgi: warning:" not in logs.stderr
    finally:
        docker("rm", "--force", name, check=False)


def test_runtime_image_holds_byte_compiled_modules(docker: Docker, runtime_image: str):
    # Nothing can be compiled at run time (read-only venv, PYTHONDONTWRITEBYTECODE): without
    # .pyc files every cold start would compile werkzeug, gunicorn and funcwsgi from source.
    check = (
        "import importlib.util, os, funcwsgi.config, gunicorn.arbiter, werkzeug.http\n"
        "missing = [m.__name__ for m in (funcwsgi.config, gunicorn.arbiter, werkzeug.http)"
        " if not os.path.exists(importlib.util.cache_from_source(m.__file__))]\n"
        "print(missing or 'compiled')"
    )
    result = docker("run", "--rm", "--network", "host", "--entrypoint", "python3", runtime_image, "-c", check, timeout=120)
    assert result.stdout.strip() == "compiled"


def test_runtime_image_refuses_a_missing_function(docker: Docker, runtime_image: str):
    result = docker("run", "--rm", "--network", "host", "--env", f"SERVER_PORT={free_port()}", runtime_image, check=False, timeout=120)
    assert result.returncode == 2
    assert "funcwsgi: error: no handler.py in /function: the folder is empty" in result.stderr


@pytest.fixture(scope="module")
def function_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("image")
    env = base_env()
    assert subprocess.run([*FUNCWSGI, "create", "boxed"], cwd=root, env=env, capture_output=True).returncode == 0
    project = root / "boxed"
    (project / "requirements.txt").write_text("six==1.17.0\n")
    (project / "handler.py").write_text(
        "import os\n\nimport six\n\n\ndef main(req, res):\n"
        "    res.set_body({'six': six.__version__, 'greeting': os.environ.get('GREETING'), 'uid': os.getuid()})\n"
    )
    return image_project(project, "GREETING: hi")


def test_context_only_builds_a_function_image(docker: Docker, runtime_image: str, function_project: Path):
    result = subprocess.run([*FUNCWSGI, "build", "--context-only"], cwd=function_project, env=engine_env(docker), capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    context = function_project / ".func" / "build" / "0"
    image = "boxed:context"
    built = subprocess.run([str(context / "build.sh"), image, "--network", "host"], env=engine_env(docker), capture_output=True, text=True, timeout=900)
    assert built.returncode == 0, built.stdout + built.stderr
    name = "funcwsgi-test-function"
    url = run_container(docker, image, name)
    try:
        assert requests.get(url + "/").json() == {"six": "1.17.0", "greeting": None, "uid": 10001}
        lines = docker("logs", name).stdout.splitlines()
        assert lines[0] == "Importing function sources from /function/handler.py:main"
        assert server_uid(docker, name) == 10001
        listing = docker("exec", name, "ls", "-A", "/function").stdout.split()
        assert "handler.py" in listing and ".func" not in listing
        # Compiled at build (the image cannot write .pyc at run time): the function and its requirements.
        check = (
            "import importlib.util, os, six\n"
            "sources = ['/function/handler.py', six.__file__, '/opt/funcwsgi/scaffolding/service.py']\n"
            "print([s for s in sources if not os.path.exists(importlib.util.cache_from_source(s))] or 'compiled')"
        )
        assert docker("exec", name, "python3", "-c", check).stdout.strip() == "compiled"
    finally:
        docker("rm", "--force", name, check=False)


def test_run_container(docker: Docker, runtime_image: str, function_project: Path):
    port = free_port()
    server = Server([*FUNCWSGI, "run", "--container", "--port", str(port)], {**engine_env(docker), "PYTHONUNBUFFERED": "1"}, port, cwd=function_project)
    try:
        server.wait_for_output("Ctrl-C stops it", timeout=600)
        answer = requests.get(f"http://127.0.0.1:{port}/").json()
        assert answer == {"six": "1.17.0", "greeting": "hi", "uid": 10001}, "func.yaml envs reach the container"
        invoked = subprocess.run([*FUNCWSGI, "invoke"], cwd=function_project, env=docker.env, capture_output=True, text=True, timeout=60)
        assert invoked.returncode == 0 and invoked.stdout.startswith("HTTP 200 OK"), invoked.stderr
        server.signal(signal.SIGTERM)
        assert server.wait_exit(60) == 0
    finally:
        server.stop()
    assert docker("ps", "-aq", "--filter", "name=funcwsgi-boxed").stdout.strip() == "", "the container is gone"
    assert not (function_project / ".func" / "runs" / "0").exists()
    assert __version__ in RUNTIME_IMAGE
