"""The nodejs26 runtime image, and a Node function's image built by `funcwsgi build`, run by a real docker.

Run with `make test-container` (see conftest.py for the daemon and the base image).
"""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

import pytest
import requests

from funcwsgi.cli.scaffolding import NODEJS26_IMAGE

from ..support.paths import REPO
from ..support.ports import free_port
from ..support.processes import FUNCWSGI, Server, base_env
from .conftest import Docker, build_args, engine_env, image_project, run_container, server_uid

pytestmark = pytest.mark.slow("builds images and runs containers on a docker daemon of the tests' own")

FIXTURE = REPO / "tests" / "conformance" / "fixture" / "nodejs26" / "main"
#: The project's Node 26, which runs the inspector client of tests/support/inspector_breakpoint.mjs.
NODE = REPO / ".tools" / "node" / "node_modules" / ".bin" / "node"


@pytest.fixture(scope="module")
def nodejs26_image(docker: Docker, base_image: str) -> str:
    docker(
        "build", "--tag", NODEJS26_IMAGE, "--file", str(REPO / "nodejs26" / "Dockerfile"),
        "--build-arg", f"BASE_IMAGE={base_image}", *build_args(), str(REPO), timeout=900,
    )
    return NODEJS26_IMAGE


def test_the_image_serves_a_mounted_function_as_a_non_root_user(docker: Docker, nodejs26_image: str):
    name = "funcwsgi-test-nodejs26"
    url = run_container(docker, nodejs26_image, name, "--volume", f"{FIXTURE}:/function:ro")
    try:
        assert requests.get(url + "/hello").text == "hello"
        assert requests.get(url + "/json").json() == {"a": 1, "list": [1, "two"], "text": "ü"}
        failed = requests.get(url + "/raise")
        assert (failed.status_code, failed.text) == (500, "Internal Server Error")
        port = url.rsplit(":", 1)[1]
        assert docker("logs", name).stdout.splitlines()[:4] == [
            "Importing function sources from /function/handler.js:main",
            "Tracing disabled: TRACE_COLLECTOR_ENDPOINT is not set",
            "Publisher Proxy not configured: PUBLISHER_PROXY_ADDRESS is not set",
            f"Starting nodejs26 server 127.0.0.1:{port}",
        ]
        assert server_uid(docker, name) == 10001, "the runtime does not run as root"
        version = docker("exec", name, "node", "--version").stdout.strip()
        assert version == "v26.12.1"
    finally:
        docker("rm", "--force", name, check=False)


def heap_line(docker: Docker, name: str) -> str:
    """The start-up log's line on V8's heap bounds (nodejs26/lib/heap.js)."""
    records = [json.loads(line) for line in docker("logs", name).stdout.splitlines() if line.startswith("{")]
    return next(record["message"] for record in records if record["message"].startswith("V8 heap: "))


def test_v8s_heap_is_bounded_without_a_memory_limit_and_sized_by_v8_under_one(docker: Docker, nodejs26_image: str):
    """bin/serve reads the container's cgroup: no limit, its own bounds; a limit, V8's sizes (docs/nodejs26.md#memory)."""
    unlimited, limited = "funcwsgi-test-nodejs26-heap", "funcwsgi-test-nodejs26-heap-512m"
    try:
        run_container(docker, nodejs26_image, unlimited, "--volume", f"{FIXTURE}:/function:ro")
        assert heap_line(docker, unlimited).startswith(
            "V8 heap: young generation at most 4 MB per semi-space (--max-semi-space-size=4), "
            "old generation grown 2x its live data between full collections (--heap-growing-percent=100), heap limit "
        )
        url = run_container(docker, nodejs26_image, limited, "--memory", "512m", "--volume", f"{FIXTURE}:/function:ro")
        assert requests.get(url + "/hello").text == "hello"
        line = heap_line(docker, limited)
        assert line.startswith("V8 heap: young generation sized by V8 from the container's memory limit, old generation grown as V8 chooses, heap limit "), line
        assert int(line.rsplit(" ", 2)[1]) < 512, f"V8's heap limit under a 512 MB container: {line}"
    finally:
        docker("rm", "--force", unlimited, limited, check=False)


def test_the_image_stops_on_sigterm_with_status_0(docker: Docker, nodejs26_image: str):
    name = "funcwsgi-test-nodejs26-stop"
    run_container(docker, nodejs26_image, name, "--volume", f"{FIXTURE}:/function:ro")
    try:
        docker("kill", "--signal", "TERM", name)
        assert docker("wait", name, timeout=60).stdout.strip() == "0"
    finally:
        docker("rm", "--force", name, check=False)


def test_the_image_refuses_a_missing_function(docker: Docker, nodejs26_image: str):
    result = docker("run", "--rm", "--network", "host", "--env", f"SERVER_PORT={free_port()}", nodejs26_image, check=False, timeout=120)
    assert result.returncode == 2
    assert [line for line in result.stderr.splitlines() if ": error: " in line] == [
        line for line in result.stderr.splitlines() if line.startswith("funcwsgi: error: ") and "/function" in line
    ] != []


@pytest.fixture(scope="module")
def node_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("node-image")
    created = subprocess.run([*FUNCWSGI, "create", "boxed-js", "--runtime", "nodejs26"], cwd=root, env=base_env(), capture_output=True, text=True)
    assert created.returncode == 0, created.stderr
    project = root / "boxed-js"
    (project / "handler.js").write_text(
        "export function main(req, res) {\n"
        "  return { name: req.query.name ?? null, greeting: process.env.GREETING ?? null, uid: process.getuid() };\n"
        "}\n"
    )
    return image_project(project, "GREETING: hi")


def test_funcwsgi_build_makes_a_node_function_image(docker: Docker, nodejs26_image: str, node_project: Path):
    image = "boxed-js:test"
    built = subprocess.run(
        [*FUNCWSGI, "build", "--image", image], cwd=node_project, env=engine_env(docker),
        capture_output=True, text=True, timeout=900,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    name = "funcwsgi-test-node-function"
    url = run_container(docker, image, name)
    try:
        assert requests.get(url + "/?name=box").json() == {"name": "box", "greeting": None, "uid": 10001}
        assert docker("logs", name).stdout.splitlines()[0] == "Importing function sources from /function/handler.js:main"
        listing = docker("exec", name, "ls", "-A", "/function").stdout.split()
        assert "handler.js" in listing and "package.json" in listing and ".func" not in listing
        config = json.loads(docker("inspect", "--format", "{{json .Config}}", image).stdout)
        assert config["User"] == "10001:10001"
    finally:
        docker("rm", "--force", name, check=False)
    assert not (node_project / ".func" / "build" / "0").exists()


def test_funcwsgi_run_container_for_a_node_function(docker: Docker, nodejs26_image: str, node_project: Path):
    port = free_port()
    server = Server([*FUNCWSGI, "run", "--container", "--port", str(port)], engine_env(docker), port, cwd=node_project)
    try:
        server.wait_for_output("Ctrl-C stops it", timeout=600)
        answer = requests.get(f"http://127.0.0.1:{port}/?name=run").json()
        assert answer == {"name": "run", "greeting": "hi", "uid": 10001}, "func.yaml envs reach the container"
        invoked = subprocess.run([*FUNCWSGI, "invoke", "/?name=invoked"], cwd=node_project, env=docker.env, capture_output=True, text=True, timeout=60)
        assert invoked.returncode == 0 and invoked.stdout.startswith("HTTP 200 OK"), invoked.stderr
        server.signal(signal.SIGTERM)
        assert server.wait_exit(60) == 0
    finally:
        server.stop()
    assert docker("ps", "-aq", "--filter", "name=funcwsgi-boxed-js").stdout.strip() == ""


def test_run_container_debug_on_a_bridge_publishes_the_inspector_on_loopback(
    docker: Docker, bridged_docker: Docker, nodejs26_image: str, node_project: Path, tmp_path: Path
):
    """On a daemon with a bridge: `-p 127.0.0.1:PORT:PORT` for the function and for the inspector, which
    listens on all of the container's interfaces; a debugger on the host stops a call at a breakpoint."""
    saved = tmp_path / "nodejs26.tar"
    docker("save", "--output", str(saved), nodejs26_image)
    bridged_docker("load", "--input", str(saved))
    port, debug_port = free_port(), free_port()
    command = [*FUNCWSGI, "run", "--container", "--debug", "--debug-port", str(debug_port), "--port", str(port)]
    server = Server(command, engine_env(bridged_docker), port, cwd=node_project)
    try:
        server.wait_for_output("Ctrl-C stops it", timeout=600)
        name = bridged_docker("ps", "--filter", "name=funcwsgi-boxed-js-", "--format", "{{.Names}}").stdout.split()[0]
        found = json.loads(bridged_docker("inspect", name).stdout)[0]
        assert found["HostConfig"]["NetworkMode"] in ("default", "bridge")
        assert found["HostConfig"]["PortBindings"] == {
            f"{port}/tcp": [{"HostIp": "127.0.0.1", "HostPort": str(port)}],
            f"{debug_port}/tcp": [{"HostIp": "127.0.0.1", "HostPort": str(debug_port)}],
        }
        environment = dict(item.split("=", 1) for item in found["Config"]["Env"])
        assert (environment["SERVER_HOST"], environment["SERVER_DEBUG_HOST"]) == ("0.0.0.0", "0.0.0.0")
        launch, _ = json.JSONDecoder().raw_decode(server.stderr, server.stderr.index("{", server.stderr.index(f"Debugger on 127.0.0.1:{debug_port}")))
        assert (launch["type"], launch["address"], launch["port"], launch["remoteRoot"]) == ("node", "127.0.0.1", debug_port, "/function")
        # The inspector protocol, through the published port: a breakpoint on handler.js's `return` line.
        attached = subprocess.run(
            [str(NODE), str(REPO / "tests" / "support" / "inspector_breakpoint.mjs"), str(debug_port), f"http://127.0.0.1:{port}/?name=paused", "/function/handler.js", "2"],
            capture_output=True, text=True, timeout=120,
        )
        assert attached.returncode == 0, attached.stdout + attached.stderr
        stopped = json.loads(attached.stdout)
        assert (stopped["url"], stopped["line"], len(stopped["hit"])) == ("file:///function/handler.js", 2, 1), stopped
        assert stopped["status"] == 200 and json.loads(stopped["body"])["name"] == "paused"
        server.signal(signal.SIGTERM)
        assert server.wait_exit(60) == 0
    finally:
        server.stop()
    assert bridged_docker("ps", "-aq", "--filter", "name=funcwsgi-boxed-js").stdout.strip() == ""
