"""``funcwsgi run``: serve the function on this machine, from scaffolding in ``.func/runs/N``."""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import FrameType

from ...config import specs
from ...errors import StartupError
from .. import node_modules, scaffolding, venvs
from ..containers import ENGINE_ENV, find_engine, has_bridge
from ..project import SECRETS_ENV, Project, load_project
from ..runs import RunRecord, claim_port
from .build import build_image, scaffolded_dir

#: The debugger ports VS Code's attach configurations use by default: debugpy's and Node's inspector's.
DEBUG_PORTS = {"python": 5678, "nodejs26": 9229}
NAME = "run"
HELP = "Run the function on this machine (or in a container) until Ctrl-C; --reload restarts it on edits."
EPILOG = f"""examples:
  funcwsgi run                     # http://127.0.0.1:8080 (the next free port if taken)
  funcwsgi run --reload            # restart when a file of the function changes
  funcwsgi run --port 9000 --keep  # keep .func/runs/N afterwards, to look at it
  funcwsgi run --container         # build the image and run it with docker or podman
  funcwsgi run -- --workers 2      # arguments after -- go to the service command
  funcwsgi run --debug             # a debugger port on 127.0.0.1, and how to attach VS Code

Each run scaffolds the function into .func/runs/N (the lowest free N, so runs
in several terminals do not collide), prepares a virtual environment with the
function's requirements.txt (cached by its content under $FUNCWSGI_CACHE_DIR,
default ~/.cache/funcwsgi, so the second run starts at once), and runs run.sh.
The function sees func.yaml's envs, name, labels and annotations, and
sdk.secret(NAME) reads the file NAME of the local secrets folder (func.yaml's
run.secrets, default ~/.config/funcwsgi/secrets/<name>: outside the project,
so no secret is committed with it). Ctrl-C stops
it and removes .func/runs/N unless --keep. In a scaffolded project
(func.yaml scaffolded: true) ./dist/run.sh is used and nothing is generated.
--container builds the image (see 'funcwsgi build') and runs it on the
engine's default bridge network, its port published on --host (-p
127.0.0.1:PORT:PORT), or with the host's network where the daemon has no
bridge; {ENGINE_ENV} chooses docker or podman. --debug sets
SERVER_DEBUG_PORT (--debug-port, default {DEBUG_PORTS['python']} for Python with debugpy,
{DEBUG_PORTS['nodejs26']} for Node's inspector) on 127.0.0.1 and prints a VS Code launch
configuration that attaches to it; with --container a Python function's image
is built FROM {scaffolding.DEBUG_RUNTIME_IMAGE} and tagged NAME:TAG-debug (never
the image 'deploy' and 'push' use), and the debugger's port is published on the
host's 127.0.0.1 beside the function's (the debugger listening on all of the
container's interfaces), or is the host's where the daemon has no bridge.

exit status: 0 when stopped with Ctrl-C or SIGTERM, 2 for a start-up error
(bad func.yaml, no docker for --container), else the function server's own.
"""
ACCEPTS_EXTRA = True
#: Where a container run mounts the local secrets folder: a folder of HANDLER_SECRETS_PATH's default.
CONTAINER_SECRETS = "/workspace/secret"
#: Seconds the server gets to stop after SIGTERM before it is killed.
STOP_TIMEOUT = 10.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("directory", nargs="?", default=".", metavar="DIR", help="the function's folder (default: the current folder)")
    parser.add_argument("--port", "-p", type=int, default=8080, help="port to listen on; the next free one if taken (default 8080)")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1; 0.0.0.0 for every interface)")
    parser.add_argument("--reload", action="store_true", help="restart the function when its files change (werkzeug's reloader)")
    parser.add_argument("--keep", action="store_true", help="keep .func/runs/N when the run ends")
    parser.add_argument("--container", action="store_true", help="build the function's image and run it in a container")
    parser.add_argument("--debug", action="store_true", help="listen for a debugger on 127.0.0.1 and print how to attach VS Code")
    parser.add_argument("--debug-port", type=int, default=None, metavar="PORT", help="the debugger's port (default 5678 for Python, 9229 for Node)")


class Stop(Exception):
    """SIGINT (Ctrl-C), SIGTERM or SIGHUP arrived: stop the function and clean up."""


def _raise_stop(signum: int, frame: FrameType | None) -> None:
    raise Stop(signal.Signals(signum).name)


def run(args: argparse.Namespace) -> int:
    if not 1 <= args.port <= 65535:
        raise StartupError(f"--port {args.port} is invalid: expected an integer from 1 to 65535")
    if args.debug_port is not None and not (args.debug and 1 <= args.debug_port <= 65535):
        raise StartupError(f"--debug-port {args.debug_port} is invalid: expected an integer from 1 to 65535, with --debug")
    check_as_setting("--host", args.host, "SERVER_HOST")
    project = load_project(args.directory)
    # SIGINT too: a shell that starts us in the background leaves it ignored, and Ctrl-C must still stop a run.
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, _raise_stop)
    folder = scaffolding.claim(project.func_dir / "runs")
    try:
        if args.container:
            return run_in_container(project, folder, args)
        return run_on_host(project, folder, args)
    finally:
        if args.keep:
            say(f"Kept {folder}")
        else:
            scaffolding.remove(folder)


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def url_host(host: str) -> str:
    if host in ("0.0.0.0", ""):
        return "127.0.0.1"
    if host == "::":
        return "[::1]"
    return f"[{host}]" if ":" in host else host


def run_on_host(project: Project, folder: Path, args: argparse.Namespace) -> int:
    if project.is_node and args.reload:
        raise StartupError("--reload is for Python functions; a nodejs26 function restarts with each 'funcwsgi run'")
    if project.scaffolded:
        scripts = scaffolded_dir(project, "run.sh")
    else:
        scaffolding.write(project, folder)
        scripts = folder
    record = claim_port(project.func_dir / "runs", folder, args.host, args.port, url_host(args.host))
    if record.port != args.port:
        say(f"Port {args.port} is taken; using {record.port}")
    env = {**os.environ, **project.function_env(), "SERVER_HOST": args.host, "SERVER_PORT": str(record.port)}
    env.setdefault(SECRETS_ENV, str(announce_secrets(project)))
    if project.is_node:
        node_modules.prepare(project.root, progress=say)
    else:
        environment = venvs.prepare(project.root / "requirements.txt", progress=say)
        env.update(
            VIRTUAL_ENV=str(environment),
            PATH=f"{environment / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
            PYTHONUNBUFFERED="1",
        )
        env.pop("PYTHONHOME", None)
    for name in handler_folder_names():  # the scaffolding finds the function through its link
        env.pop(name, None)
    if args.reload:
        env.update(SERVER_ADAPTER="werkzeug", SERVER_RELOAD="true")
    if args.debug:
        port = debug_port(project, args)
        announce_debugger(project, port, remote_root=str(project.root.resolve()))
        env.update(SERVER_DEBUG_PORT=str(port), SERVER_DEBUG_HOST="127.0.0.1")
    command = [str(scripts / "run.sh"), *project.run_args, *args.extra]
    process = subprocess.Popen(command, env=env, cwd=project.root, start_new_session=True)
    return supervise(project, process, record, scripts, reload=args.reload)


def debug_port(project: Project, args: argparse.Namespace) -> int:
    """The debugger's port: --debug-port, else the one VS Code's attach configurations use for the runtime."""
    port: int = args.debug_port or DEBUG_PORTS[project.runtime]
    return port


def announce_debugger(project: Project, port: int, *, remote_root: str) -> None:
    """Print the VS Code configuration that attaches to the debugger on the host's 127.0.0.1:``port``."""
    if project.is_node:
        launch = {
            "name": f"Attach to {project.name} (funcwsgi)", "type": "node", "request": "attach",
            "address": "127.0.0.1", "port": port, "localRoot": "${workspaceFolder}", "remoteRoot": remote_root,
        }
    else:
        launch = {
            "name": f"Attach to {project.name} (funcwsgi)", "type": "debugpy", "request": "attach",
            "connect": {"host": "127.0.0.1", "port": port},
            "pathMappings": [{"localRoot": "${workspaceFolder}", "remoteRoot": remote_root}], "justMyCode": True,
            # debugpy's own default stops every thread at a breakpoint: the server would stop answering.
            "stopAllThreadsOnSuspend": False,
        }
    say(f"Debugger on 127.0.0.1:{port}; attach VS Code with this configuration in .vscode/launch.json's \"configurations\":")
    say(json.dumps(launch, indent=2))


def announce_secrets(project: Project) -> Path:
    """The local secrets folder, said once so the developer knows where sdk.secret() looks."""
    folder = project.local_secrets
    if folder.is_dir():
        say(f"Secrets: sdk.secret(NAME) reads the file NAME in {folder}")
    else:
        say(f"Secrets: {folder} does not exist; create it with one file per secret for sdk.secret(NAME) to find")
    return folder


def check_as_setting(option: str, value: str, env: str) -> None:
    """Refuse ``value`` as the runtime would refuse the setting ``env`` it becomes, but naming ``option``, which the user gave."""
    for _, _, spec in specs():
        if spec.env == env:
            try:
                spec.parse(value)
            except ValueError:
                raise StartupError(f"{option} {value!r} is invalid: expected {spec.expected}") from None
            return


def handler_folder_names() -> list[str]:
    """HANDLER_FOLDER and its compatibility names, which a developer's shell may have set."""
    for field_name, _, spec in specs():
        if field_name == "handler_folder":
            return [spec.env, *(alias.name for alias in spec.aliases)]
    return ["HANDLER_FOLDER"]


def run_in_container(project: Project, folder: Path, args: argparse.Namespace) -> int:
    engine = find_engine("run --container", "run without --container")
    image = project.default_image
    debug_image = None
    if args.debug and not project.is_node:  # the nodejs26 image has its inspector already
        debug_image = require_debug_runtime(engine)
        image = debug_tag(image)  # never under the name 'deploy' and 'push' use: debugpy runs any code sent to it
    status = build_image(project, image, extra=[], keep=args.keep, runtime_image=debug_image)
    if status != 0:
        return status
    name = f"funcwsgi-{project.name}-{os.getpid()}"
    record = claim_port(project.func_dir / "runs", folder, args.host, args.port, url_host(args.host), container=name)
    if record.port != args.port:
        say(f"Port {args.port} is taken; using {record.port}")
    debugger = None
    if args.debug:
        debugger = debug_port(project, args)
        announce_debugger(project, debugger, remote_root="/function")
    bridge = has_bridge(engine)
    if debugger is not None and bridge:  # the runtime's own warning about 0.0.0.0 speaks of the container's network
        say(f"The debugger listens on all of the container's interfaces; {os.path.basename(engine)} publishes it on 127.0.0.1 only")
    network, listening = network_arguments(bridge, args.host, record.port, debugger)
    settings = {**project.function_env(), **listening}
    command = [engine, "run", "--rm", "--name", name, *network]
    secrets = announce_secrets(project)
    if secrets.is_dir() and SECRETS_ENV not in settings:
        command += ["--volume", f"{secrets}:{CONTAINER_SECRETS}:ro"]
    for key, value in settings.items():
        command += ["--env", f"{key}={value}"]
    command += [image, *project.run_args, *args.extra]
    process = subprocess.Popen(command, cwd=project.root, start_new_session=True)
    return supervise(project, process, record, folder, reload=False, stop=[engine, "stop", "--time", str(int(STOP_TIMEOUT)), name])


def network_arguments(bridge: bool, host: str, port: int, debugger: int | None) -> tuple[list[str], dict[str, str]]:
    """The engine's network arguments for a run, and the settings that go with them.

    On the engine's default bridge network (docker's everywhere, Docker Desktop's
    included, and podman's) the container listens on all its own interfaces and
    the engine publishes the function's port on ``host`` and the debugger's on the
    host's 127.0.0.1 only: whoever reaches a debugger runs any code in the
    function. A daemon without a bridge gets the host's network, as before: the
    ports are the host's, each on the address a run on the host would use.
    """
    if not bridge:
        settings = {"SERVER_HOST": host, "SERVER_PORT": str(port)}
        if debugger is not None:
            settings.update(SERVER_DEBUG_HOST="127.0.0.1", SERVER_DEBUG_PORT=str(debugger))
        return ["--network", "host"], settings
    arguments = ["-p", f"{published_host(host)}:{port}:{port}"]
    settings = {"SERVER_HOST": "0.0.0.0", "SERVER_PORT": str(port)}
    if debugger is not None:
        arguments += ["-p", f"127.0.0.1:{debugger}:{debugger}"]
        settings.update(SERVER_DEBUG_HOST="0.0.0.0", SERVER_DEBUG_PORT=str(debugger))
    return arguments, settings


def published_host(host: str) -> str:
    """``host`` as ``-p`` takes it: an IPv6 address in brackets."""
    return f"[{host}]" if ":" in host else host


def require_debug_runtime(engine: str) -> str:
    """The debug variant of the runtime image, which is only ever built locally: said in one line when missing."""
    image = scaffolding.DEBUG_RUNTIME_IMAGE
    found = subprocess.run([engine, "image", "inspect", image], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
    if found.returncode != 0:
        raise StartupError(
            f"run --container --debug builds FROM {image}, which {os.path.basename(engine)} does not have: build it in funcwsgi's "
            f"repository with 'DOCKER_BUILDKIT=1 {os.path.basename(engine)} build --build-arg EXTRAS=debug --tag {image} .' "
            "(docs/cli.md#the-runtime-image)"
        )
    return image


def debug_tag(image: str) -> str:
    """``NAME:TAG`` as ``NAME:TAG-debug`` (``NAME:latest-debug`` without a tag; a digest dropped)."""
    image = image.split("@", 1)[0]
    name, colon, tag = image.rpartition(":")
    if colon and "/" not in tag:  # a tag, not a registry's port
        return f"{name}:{tag}-debug"
    return f"{image}:latest-debug"


def supervise(project: Project, process: subprocess.Popen[bytes], record: RunRecord, where: Path, *, reload: bool, stop: list[str] | None = None) -> int:
    """Wait for the server to listen, print its URL, and wait until it exits or we are told to stop."""
    try:
        if not wait_listening(process, record):
            code = process.wait()
            say(f"funcwsgi: error: the function exited with status {code} before it listened; see its output above")
            return code or 1
        mode = " with reload" if reload else ""
        print(f"Function {project.name!r} running{mode} at {record.url}/ ({where}); Ctrl-C stops it", flush=True)
        code = process.wait()
        say(f"funcwsgi: the function exited with status {code}")
        return code
    except (KeyboardInterrupt, Stop):
        say("Stopping ...")
        terminate(process, stop)
        return 0
    finally:
        terminate(process, stop)


def wait_listening(process: subprocess.Popen[bytes], record: RunRecord) -> bool:
    """Poll the port until the server answers an HTTP request (True) or the process ends (False).

    An answer, not a connection: a port an engine publishes from a bridge network is
    taken by its proxy at once, before the server in the container listens.
    """
    host = record.url.split("//", 1)[1].rsplit(":", 1)[0].strip("[]")
    while process.poll() is None:
        try:
            with socket.create_connection((host, record.port), timeout=0.5) as probe:
                probe.sendall(b"GET /healthz HTTP/1.0\r\nHost: funcwsgi-run\r\n\r\n")
                if probe.recv(5) == b"HTTP/":
                    return True
        except OSError:
            pass
        time.sleep(0.05)
    return False


def terminate(process: subprocess.Popen[bytes], stop: list[str] | None) -> None:
    """SIGTERM the server's process group (the reloader's child too), then SIGKILL if it lingers."""
    if stop is not None and process.poll() is None:
        subprocess.run(stop, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=STOP_TIMEOUT + 5)
    # The whole group, even when its leader is gone: a reloader's child may outlive it.
    try:
        os.killpg(process.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        process.wait(timeout=STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.wait()
