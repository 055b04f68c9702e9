"""`funcwsgi build --push` and `funcwsgi push` against a real registry (Debian's docker-registry) on 127.0.0.1.

The image goes to the registry, is deleted locally, pulled back, run and
called. A registry that wants a login and one that is not there give the one
line `funcwsgi push` promises. Run with `make test-container`.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from ..support.ports import free_port
from ..support.processes import FUNCWSGI, base_env
from .conftest import Docker, cannot_run, engine_env, image_project, run_container

pytestmark = pytest.mark.slow("builds images and runs containers on a docker daemon of the tests' own")

# bcrypt of the password "funcwsgi-test": the registry's htpasswd accepts bcrypt only.
HTPASSWD = "pusher:$2b$12$bHxVUqxrgoUAy/olD9gpveBXRLWd7qUCrkI7.PBbNS5IqWjZKqSWu\n"


class Registry:
    """`docker-registry serve` on an ephemeral loopback port, its storage in a temporary folder."""

    def __init__(self, *, login: bool = False) -> None:
        program = shutil.which("docker-registry")
        if program is None:
            cannot_run("docker-registry is not installed (apt-get install docker-registry)")
        self.folder = Path(tempfile.mkdtemp(prefix="funcwsgi-registry-", dir="/tmp"))
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        auth = ""
        if login:
            (self.folder / "htpasswd").write_text(HTPASSWD)
            auth = f"auth:\n  htpasswd:\n    realm: funcwsgi-test\n    path: {self.folder / 'htpasswd'}\n"
        config = self.folder / "config.yml"
        config.write_text(
            f"version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: {self.folder / 'data'}\n"
            f"http:\n  addr: {self.address}\n  secret: funcwsgi-test\n{auth}"
        )
        self.log = open(self.folder / "registry.log", "w")  # noqa: SIM115 (closed by stop())
        self.process = subprocess.Popen([program, "serve", str(config)], stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 30
        while True:
            try:
                if requests.get(f"http://{self.address}/v2/", timeout=1).status_code in (200, 401):
                    break
            except requests.ConnectionError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise AssertionError(f"docker-registry did not start: {(self.folder / 'registry.log').read_text()[-2000:]}")
            time.sleep(0.05)

    def tags(self, repository: str) -> list[str]:
        answer = requests.get(f"http://{self.address}/v2/{repository}/tags/list", timeout=5)
        return answer.json().get("tags") or [] if answer.status_code == 200 else []

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()
        shutil.rmtree(self.folder, ignore_errors=True)


@pytest.fixture(scope="module")
def registry(docker: Docker) -> Iterator[Registry]:
    server = Registry()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def login_registry(docker: Docker) -> Iterator[Registry]:
    server = Registry(login=True)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("pushed")
    assert subprocess.run([*FUNCWSGI, "create", "pushed"], cwd=root, env=base_env(), capture_output=True, check=False).returncode == 0
    folder = root / "pushed"
    (folder / "handler.py").write_text("import os\n\n\ndef main(req, res):\n    res.set_body({'pushed': True, 'function': os.environ.get('FUNC_NAME')})\n")
    image_project(folder)
    return folder


def funcwsgi(docker: Docker, project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*FUNCWSGI, *args], cwd=project, env=engine_env(docker), capture_output=True, text=True, timeout=900, check=False)


def test_build_push_then_pull_back_and_run(docker: Docker, runtime_image: str, registry: Registry, project: Path):  # noqa: F811
    image = f"{registry.address}/team/pushed:1"
    result = funcwsgi(docker, project, "build", "--push", "--image", image)
    assert result.returncode == 0, result.stderr
    assert f"Pushing image {image} to {registry.address} with docker ..." in result.stderr
    assert result.stderr.rstrip().endswith(f"Pushed image {image}")
    assert registry.tags("team/pushed") == ["1"]

    docker("rmi", image)
    assert docker("image", "inspect", image, check=False).returncode != 0, "the local copy is gone"
    docker("pull", image, timeout=300)
    name = "funcwsgi-test-pulled"
    try:
        url = run_container(docker, image, name, "--env", "FUNC_NAME=pushed")
        assert requests.get(url + "/", timeout=5).json() == {"pushed": True, "function": "pushed"}
    finally:
        docker("rm", "--force", name, check=False)


def test_push_uses_func_yaml_image(docker: Docker, runtime_image: str, registry: Registry, project: Path):  # noqa: F811
    image = f"{registry.address}/team/pushed:from-func-yaml"
    docker("tag", runtime_image, image)
    text = (project / "func.yaml").read_text()
    (project / "func.yaml").write_text(text.replace('image: ""', f"image: {image}") if 'image: ""' in text else text + f"image: {image}\n")
    try:
        result = funcwsgi(docker, project, "push")
    finally:
        (project / "func.yaml").write_text(text)
    assert result.returncode == 0, result.stderr
    assert "from-func-yaml" in registry.tags("team/pushed")


def test_push_without_login_is_one_line(docker: Docker, runtime_image: str, login_registry: Registry, project: Path):  # noqa: F811
    image = f"{login_registry.address}/team/pushed:1"
    docker("tag", runtime_image, image)
    result = funcwsgi(docker, project, "push", "--image", image)
    assert result.returncode == 1
    assert result.stderr.splitlines()[-1] == (
        f"funcwsgi: error: the registry {login_registry.address} refused {image}: not logged in, or not allowed to push there; "
        f"log in with 'docker login {login_registry.address}' and push again"
    )
    assert login_registry.tags("team/pushed") == []


def test_push_to_an_unreachable_registry_is_one_line(docker: Docker, runtime_image: str, project: Path):  # noqa: F811
    address = f"127.0.0.1:{free_port()}"  # nothing listens there
    image = f"{address}/team/pushed:1"
    docker("tag", runtime_image, image)
    result = funcwsgi(docker, project, "push", "--image", image)
    assert result.returncode == 1
    last = result.stderr.splitlines()[-1]
    assert last.startswith(f"funcwsgi: error: cannot reach the registry {address} to push {image} (")
    assert last.endswith("); check the registry's address and that it is running") and "connection refused" in last


def test_push_of_an_image_never_built_is_one_line(docker: Docker, registry: Registry, project: Path):
    image = f"{registry.address}/team/never-built:1"
    result = funcwsgi(docker, project, "push", "--image", image)
    assert result.returncode == 1
    assert result.stderr.splitlines()[-1] == (
        f"funcwsgi: error: there is no local image {image} to push; build it first ('funcwsgi build --push' builds and pushes)"
    )
