"""A docker daemon of the tests' own, and a local stand-in for the base image.

`make test-container` sets FUNCWSGI_CONTAINER_TESTS=1. The fixtures start
`dockerd` on a private socket (no bridge, no iptables: containers use host
networking; `bridged_docker` is a second one with a bridge of its own), each
keeping its images in memory (a tmpfs), import `python:3.14-slim` made from
Debian sid by debootstrap (tests/container/rootfs.py: image registries are
unreachable here; the root filesystem is cached as a tarball under
$FUNCWSGI_TEST_CACHE, default ~/.cache/funcwsgi-test) and stop and remove
everything they started. Once enabled, an environment that cannot run
them (no docker, not root, dockerd not starting, no debootstrap or mirror,
debootstrap failing) fails every test here with the reason: a green
`make test-container` means images were built and run. Without
FUNCWSGI_CONTAINER_TESTS=1 (a plain `pytest`) they are skipped.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NoReturn

import pytest
import requests

from ..support.ports import free_port
from ..support.processes import base_env
from . import rootfs

ENABLE = "FUNCWSGI_CONTAINER_TESTS"


def cannot_run(reason: str) -> NoReturn:
    """Fail with the reason: the container tests were asked for, and a skip would pass for a run."""
    pytest.fail(f"container tests cannot run here ({ENABLE}=1): {reason}", pytrace=False)


def docker_cli() -> str | None:
    # Debian's own CLI first: BuildKit (needed for RUN --mount secrets) works through it.
    for candidate in ("/usr/bin/docker", shutil.which("docker")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


class Docker:
    """A docker CLI bound to the tests' daemon."""

    def __init__(self, cli: str, socket: str) -> None:
        self.cli = cli
        self.env = {**base_env(), "DOCKER_HOST": f"unix://{socket}", "DOCKER_BUILDKIT": "1", "CONTAINER_ENGINE": cli}

    def __call__(self, *args: str, check: bool = True, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        result = subprocess.run([self.cli, *args], env=self.env, capture_output=True, timeout=timeout)
        completed = subprocess.CompletedProcess(result.args, result.returncode, result.stdout.decode(errors="replace"), result.stderr.decode(errors="replace"))
        if check and completed.returncode != 0:
            raise AssertionError(f"docker {' '.join(args)} failed ({completed.returncode}):\n{completed.stdout}\n{completed.stderr}")
        return completed


@pytest.fixture(scope="session")
def docker() -> Iterator[Docker]:
    """The tests' daemon: no bridge, so containers use the host's network."""
    if os.environ.get(ENABLE) != "1":
        pytest.skip(f"container tests run with `make test-container` ({ENABLE}=1)")
    with daemon("none") as client:
        yield client


@pytest.fixture(scope="session")
def bridged_docker(docker: Docker) -> Iterator[Docker]:
    """A second daemon, with a bridge of its own as docker's default network (``dockerd --bridge``).

    No iptables here either: docker's userland proxy publishes a port (``-p``) by
    listening on the host and forwarding to the container's address on the bridge,
    which the host reaches directly. The bridge's name and subnet are this run's.
    """
    name = f"fwbr{os.getpid() % 100000}"
    used = subprocess.run(["ip", "-4", "-o", "addr"], capture_output=True, text=True).stdout
    subnet = next((f"10.231.{third}" for third in range(20, 250) if f" 10.231.{third}." not in used), None)
    if subnet is None:
        cannot_run("no free 10.231.x.0/24 subnet for the bridge")
    for step in (["link", "add", name, "type", "bridge"], ["addr", "add", f"{subnet}.1/24", "dev", name], ["link", "set", name, "up"]):
        made = subprocess.run(["ip", *step], capture_output=True, text=True)
        if made.returncode != 0:
            subprocess.run(["ip", "link", "del", name], capture_output=True)
            cannot_run(f"cannot make the bridge {name} (ip {' '.join(step)}): {made.stderr.strip()}")
    try:
        with daemon(name) as client:
            yield client
    finally:
        subprocess.run(["ip", "link", "del", name], capture_output=True)


@contextmanager
def daemon(bridge: str) -> Iterator[Docker]:
    """A dockerd of the tests' own on a private socket, its default network on ``bridge`` ("none": no bridge)."""
    cli, dockerd = docker_cli(), shutil.which("dockerd")
    if cli is None or dockerd is None:
        cannot_run("docker is not installed (apt-get install docker.io)")
    if os.geteuid() != 0:
        cannot_run("starting dockerd needs root")
    workdir = Path(tempfile.mkdtemp(prefix="funcwsgi-docker-", dir="/tmp"))
    socket = workdir / "docker.sock"
    in_memory(workdir / "data")
    log = open(workdir / "dockerd.log", "w")
    started = subprocess.Popen(
        [dockerd, "--iptables=false", "--ip6tables=false", f"--bridge={bridge}",
         "--data-root", str(workdir / "data"), "--exec-root", str(workdir / "exec"),
         "--pidfile", str(workdir / "dockerd.pid"), "-H", f"unix://{socket}"],
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )
    client = Docker(cli, str(socket))
    try:
        deadline = time.monotonic() + 60
        while client("version", check=False, timeout=10).returncode != 0:
            if started.poll() is not None or time.monotonic() > deadline:
                cannot_run(f"dockerd did not start: {(workdir / 'dockerd.log').read_text()[-2000:]}")
            time.sleep(0.2)
        yield client
    finally:
        leftover = client("ps", "-aq", check=False, timeout=30).stdout.split()
        if leftover:
            client("rm", "-f", *leftover, check=False, timeout=60)
        started.send_signal(signal.SIGTERM)
        try:
            started.wait(timeout=60)
        except subprocess.TimeoutExpired:
            started.kill()
            started.wait()
        log.close()
        unmount_under(workdir)
        shutil.rmtree(workdir, ignore_errors=True)


def in_memory(folder: Path) -> None:
    """Mount a tmpfs on ``folder`` for the daemon's images, containers and build cache, where it can.

    The builds then write to memory instead of syncing layers to disk, and a stop unmounts in an
    instant what removing the layers file by file took a minute and more for while phase 1's other
    tests held the cores (docs/reliability.md). Where mounting is refused, the daemon uses the disk.
    """
    folder.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=50%,mode=0710", "funcwsgi-docker", str(folder)], capture_output=True)


def unmount_under(folder: Path) -> None:
    """Unmount what is mounted below ``folder`` (the tmpfs, what dockerd left: its network namespace file), deepest first."""
    mounts = [line.split()[1] for line in Path("/proc/mounts").read_text().splitlines()]
    for mount in sorted((m for m in mounts if m.startswith(str(folder) + "/")), key=len, reverse=True):
        subprocess.run(["umount", "--lazy", mount], capture_output=True)


@pytest.fixture(scope="session")
def base_image(docker: Docker) -> str:
    """python:3.14-slim as a local image: Debian sid with Python 3.14, made by debootstrap (tests/container/rootfs.py)."""
    try:
        made = rootfs.tarball()
    except rootfs.CannotBootstrap as reason:
        cannot_run(str(reason))
    docker("import", str(made), rootfs.BASE_IMAGE)
    return rootfs.BASE_IMAGE


def pip_cert() -> str | None:
    """The CA bundle pip uses on this host, handed to builds as a secret."""
    for candidate in (os.environ.get("PIP_CERT"), "/etc/ssl/certs/ca-certificates.crt"):
        if candidate and os.path.isfile(candidate):
            return candidate
    return None


def build_args() -> list[str]:
    """For `docker build` itself; build.sh adds the PIP_CERT secret on its own."""
    cert = pip_cert()
    return ["--network", "host", *(["--secret", f"id=pip-cert,src={cert}"] if cert else [])]


@pytest.fixture(scope="session")
def runtime_image(docker: Docker, base_image: str) -> str:
    """The runtime image built from the repository's Dockerfile, once per run."""
    from funcwsgi.cli.scaffolding import RUNTIME_IMAGE

    from ..support.paths import REPO

    docker("build", "--tag", RUNTIME_IMAGE, "--build-arg", f"BASE_IMAGE={base_image}", *build_args(), str(REPO), timeout=900)
    return RUNTIME_IMAGE


def engine_env(docker: Docker) -> dict[str, str]:
    """The environment of a `funcwsgi build`/`run --container`: the tests' docker daemon and the pip certificate."""
    cert = pip_cert()
    return {**docker.env, **({"PIP_CERT": cert} if cert else {}), "PYTHONUNBUFFERED": "1"}


def wait_ready(url: str, docker: Docker, container: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if requests.get(url + "/healthz", timeout=1).status_code == 200:
                return
        except requests.RequestException:
            pass
        state = docker("inspect", "--format", "{{.State.Running}}", container, check=False).stdout.strip()
        if state == "false":
            break
        time.sleep(0.1)
    logs = docker("logs", container, check=False)
    raise AssertionError(f"{container} never answered on {url}\n{logs.stdout}\n{logs.stderr}")


def run_container(docker: Docker, image: str, name: str, *args: str, command: tuple[str, ...] = ()) -> str:
    port = free_port()
    docker("run", "--detach", "--name", name, "--network", "host",
           "--env", "SERVER_HOST=127.0.0.1", "--env", f"SERVER_PORT={port}", *args, image, *command)
    url = f"http://127.0.0.1:{port}"
    wait_ready(url, docker, name)
    return url


def server_uid(docker: Docker, container: str) -> int:
    status = docker("exec", container, "cat", "/proc/1/status").stdout
    real_uid = next(line for line in status.splitlines() if line.startswith("Uid:")).split()[1]
    return int(real_uid)


def image_project(project: Path, envs: str = "") -> Path:
    """A project made by `funcwsgi create`, its image built on the host's network (the daemon has no bridge), with ``envs`` in func.yaml."""
    text = (project / "func.yaml").read_text()
    if envs:
        text = text.replace("envs: {}", f"envs: {{{envs}}}")
    text = text.replace("args: []             # appended to the image build", 'args: ["--network", "host"] # appended to the image build')
    (project / "func.yaml").write_text(text)
    return project
