"""`funcwsgi run --container --debug` with a real docker: the debug runtime image, a debugger attached, calls served.

Run with `make test-container` (see conftest.py for the daemons and the base image).
On a daemon with a bridge (docker's default network) the run publishes the
function's port and the debugger's on the host's 127.0.0.1 (`-p 127.0.0.1:PORT:PORT`),
debugpy listening on all of the container's interfaces; on the tests' daemon, which
has none, the container has the host's network and debugpy listens on 127.0.0.1,
the host's loopback. Either way the debugger's port is reachable on 127.0.0.1 of the
host and nowhere else.
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
from pathlib import Path

import pytest
import requests

from funcwsgi.cli.scaffolding import DEBUG_RUNTIME_IMAGE

from ..support.dap import DEBUGGED, DapClient, breakpoint_line, stop_one_call
from ..support.paths import REPO
from ..support.ports import free_port
from ..support.processes import FUNCWSGI, Server, base_env
from .conftest import Docker, build_args, engine_env, image_project

pytestmark = pytest.mark.slow("builds images and runs containers on a docker daemon of the tests' own")


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project made by `funcwsgi create`, holding the tests' function."""
    root = tmp_path_factory.mktemp("debug")
    assert subprocess.run([*FUNCWSGI, "create", "debugged"], cwd=root, env=base_env(), capture_output=True).returncode == 0
    project = root / "debugged"
    for name in ("handler.py", "requirements.txt"):
        shutil.copy(DEBUGGED / name, project / name)
    return image_project(project)


def test_without_the_debug_runtime_image_the_run_stops_with_one_line(docker: Docker, project: Path):
    if docker("image", "inspect", DEBUG_RUNTIME_IMAGE, check=False).returncode == 0:
        docker("image", "rm", DEBUG_RUNTIME_IMAGE)  # the next build of it comes from the build cache
    result = subprocess.run(
        [*FUNCWSGI, "run", "--container", "--debug", "--port", str(free_port())], cwd=project, env=engine_env(docker),
        capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines()[-1] == (
        f"funcwsgi: error: run --container --debug builds FROM {DEBUG_RUNTIME_IMAGE}, which docker does not have: build it in "
        f"funcwsgi's repository with 'DOCKER_BUILDKIT=1 docker build --build-arg EXTRAS=debug --tag {DEBUG_RUNTIME_IMAGE} .' "
        "(docs/cli.md#the-runtime-image)"
    )


@pytest.fixture(scope="module")
def debug_runtime_image(docker: Docker, base_image: str) -> str:
    """The runtime image's debug variant, built as docs/cli.md says (the debug extra: debugpy)."""
    docker("build", "--tag", DEBUG_RUNTIME_IMAGE, "--build-arg", f"BASE_IMAGE={base_image}", "--build-arg", "EXTRAS=debug",
           *build_args(), str(REPO), timeout=900)
    return DEBUG_RUNTIME_IMAGE


def container_arguments(docker: Docker, project: str) -> tuple[str, dict[str, object], dict[str, str]]:
    """What the engine was asked for the run's container: (network mode, port bindings, environment)."""
    names = docker("ps", "-a", "--filter", f"name=funcwsgi-{project}-", "--format", "{{.Names}}").stdout.split()
    assert names, f"no container of {project}: {docker('ps', '-a').stdout}"
    name = names[0]
    found = json.loads(docker("inspect", name).stdout)[0]
    environment = dict(item.split("=", 1) for item in found["Config"]["Env"])
    return found["HostConfig"]["NetworkMode"], found["HostConfig"]["PortBindings"] or {}, environment


def attach_and_stop(
    docker: Docker, project: Path, command: list[str], port: int, debug_port: int, listening: str
) -> tuple[str, dict[str, object], dict[str, str]]:
    """Run ``command`` (a `funcwsgi run --container --debug`), attach a debugger as VS Code would, stop one
    call at a breakpoint; what the engine was asked for the container (:func:`container_arguments`)."""
    server = Server(command, engine_env(docker), port, cwd=project)
    try:
        server.wait_for_output("Ctrl-C stops it", timeout=600)
        try:
            arguments = container_arguments(docker, "debugged")
        except AssertionError as error:
            raise AssertionError(f"{error}\nthe run said:\n{server.stdout[-3000:]}\n{server.stderr[-3000:]}") from None
        said = server.wait_for_output(f"Debugger (debugpy) listening on {listening}:{debug_port}", timeout=60)
        # The launch configuration printed for VS Code, as a developer pastes it.
        printed = server.stderr
        launch, _ = json.JSONDecoder().raw_decode(printed, printed.index("{", printed.index(f"Debugger on 127.0.0.1:{debug_port}")))
        assert launch["type"] == "debugpy" and launch["request"] == "attach"
        assert launch["connect"] == {"host": "127.0.0.1", "port": debug_port}
        assert launch["pathMappings"] == [{"localRoot": "${workspaceFolder}", "remoteRoot": "/function"}]
        assert launch["stopAllThreadsOnSuspend"] is False, "a breakpoint stops its call, not the server"
        # Built under its own tag, FROM the debug variant: the image 'deploy' and 'push' use is not this one.
        assert docker("image", "inspect", "debugged:latest-debug").returncode == 0
        assert docker("image", "inspect", "debugged:latest", check=False).returncode != 0

        client = DapClient(debug_port)
        try:
            answer = client.request("initialize", {"clientID": "funcwsgi-tests", "adapterID": "debugpy", "pathFormat": "path",
                                                   "linesStartAt1": True, "columnsStartAt1": True})
            assert answer["success"] is True and answer["body"]["supportsConfigurationDoneRequest"] is True, answer
            # Attached: the function answers, from the process the debugger is in.
            pid = requests.get(server.url + "/", timeout=10).text
            assert f"listening on {listening}:{debug_port}, pid {pid}:" in said

            frame, other, paused = stop_one_call(client, launch, project, breakpoint_line(), server.url)
            # The container's /function/handler.py, mapped back to the developer's file.
            assert (frame["source"]["path"], frame["line"]) == (str(project / "handler.py"), breakpoint_line()), frame
            assert other == pid, "one call waits at the breakpoint; the others are answered"
            assert paused.status_code == 200 and paused.text == "past the breakpoint"
            client.request("disconnect", {"terminateDebuggee": False})
        finally:
            client.close()
        assert requests.get(server.url + "/", timeout=10).text == pid, "the function serves on after the debugger left"
        server.signal(signal.SIGTERM)
        assert server.wait_exit(60) == 0
    finally:
        server.stop()
    assert docker("ps", "-aq", "--filter", "name=funcwsgi-debugged").stdout.strip() == "", "the container is gone"
    return arguments


def test_without_a_bridge_the_container_has_the_hosts_network_and_the_debugger_its_loopback(docker: Docker, debug_runtime_image: str, project: Path):
    """The tests' daemon has no bridge: `docker run --network host`, debugpy on 127.0.0.1, the host's loopback."""
    port, debug_port = free_port(), free_port()
    command = [*FUNCWSGI, "run", "--container", "--debug", "--debug-port", str(debug_port), "--port", str(port)]
    network, bindings, environment = attach_and_stop(docker, project, command, port, debug_port, "127.0.0.1")
    assert (network, bindings) == ("host", {})
    assert (environment["SERVER_HOST"], environment["SERVER_PORT"]) == ("127.0.0.1", str(port))
    assert (environment["SERVER_DEBUG_HOST"], environment["SERVER_DEBUG_PORT"]) == ("127.0.0.1", str(debug_port))


def test_on_a_bridge_both_ports_are_published_on_loopback_and_a_debugger_stops_at_a_breakpoint(
    docker: Docker, bridged_docker: Docker, debug_runtime_image: str, project: Path, tmp_path: Path
):
    """A daemon with a bridge (as docker's everywhere, Docker Desktop's included): `-p 127.0.0.1:PORT:PORT`
    for the function and for SERVER_DEBUG_PORT, both listening on all of the container's interfaces."""
    saved = tmp_path / "debug-runtime.tar"
    docker("save", "--output", str(saved), debug_runtime_image)
    bridged_docker("load", "--input", str(saved))
    port, debug_port = free_port(), free_port()
    command = [*FUNCWSGI, "run", "--container", "--debug", "--debug-port", str(debug_port), "--port", str(port)]
    network, bindings, environment = attach_and_stop(bridged_docker, project, command, port, debug_port, "0.0.0.0")
    assert network in ("default", "bridge"), network
    assert bindings == {
        f"{port}/tcp": [{"HostIp": "127.0.0.1", "HostPort": str(port)}],
        f"{debug_port}/tcp": [{"HostIp": "127.0.0.1", "HostPort": str(debug_port)}],
    }
    assert (environment["SERVER_HOST"], environment["SERVER_DEBUG_HOST"]) == ("0.0.0.0", "0.0.0.0")
