"""``funcwsgi push``: send the function's image to its registry with docker or podman."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

from ..containers import ENGINE_ENV, find_engine
from ..project import Project, ProjectError, load_project

NAME = "push"
HELP = "Push the function's image (func.yaml's image, or --image) to its registry with docker or podman."
EPILOG = f"""examples:
  funcwsgi push                                  # func.yaml's image
  funcwsgi push --image registry.example/hello:1
  funcwsgi build --push                          # build, then push

The image must be built already ('funcwsgi build', or 'funcwsgi build --push'
for both) and named with the registry the cluster pulls from, e.g.
registry.example/team/hello:1. Log in first with 'docker login REGISTRY'.
{ENGINE_ENV} chooses docker or podman.

exit status: 0 when pushed, 1 when the engine refused or failed (one line says
why: not logged in, registry unreachable, no such local image), 2 for a bad
func.yaml or no docker or podman.
"""

# What the engines (docker, podman) say, lower-cased, for the causes a user can act on.
LOGIN_SIGNS = ("unauthorized", "authentication required", "no basic auth credentials", "access to the resource is denied",
               "denied:", "403 forbidden", "insufficient_scope")
UNREACHABLE_SIGNS = ("connection refused", "no such host", "i/o timeout", "network is unreachable", "no route to host",
                     "tls handshake timeout", "connection reset", "server misbehaving", "dial tcp")
PLAIN_HTTP_SIGNS = ("server gave http response to https client",)
MISSING_SIGNS = ("does not exist locally", "no such image", "image not known", "reference does not exist")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("directory", nargs="?", default=".", metavar="DIR", help="the function's folder (default: the current folder)")
    parser.add_argument("--image", "-i", help="name:tag of the image (default: func.yaml's image)")


def run(args: argparse.Namespace) -> int:
    project = load_project(args.directory)
    return push_image(pushed_image(project, args.image))


def pushed_image(project: Project, given: str | None) -> str:
    """The image to push: ``given``, else func.yaml's; a made-up NAME:latest names no registry of the user's."""
    if given:
        return given
    if not project.image:
        raise ProjectError(
            f"{project.root / 'func.yaml'} names no image to push: set image: REGISTRY/{project.name}:TAG "
            "(a registry the cluster pulls from), or pass --image"
        )
    return project.image


def registry_of(image: str) -> str:
    """The registry host an image reference points at (docker.io when it names none)."""
    first, slash, _ = image.partition("/")
    if slash and ("." in first or ":" in first or first == "localhost"):
        return first
    return "docker.io"


def push_image(image: str) -> int:
    """Push ``image``, showing the engine's progress; 0, or 1 after one line saying why not."""
    engine = find_engine("push", "push the image with another tool")
    tool = os.path.basename(engine)
    registry = registry_of(image)
    print(f"Pushing image {image} to {registry} with {tool} ...", file=sys.stderr, flush=True)
    process = subprocess.Popen([engine, "push", image], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace")
    assert process.stdout is not None
    for line in process.stdout:  # the layers' progress
        sys.stderr.write(f"  {line}")
    errors = process.communicate()[1]
    if process.returncode == 0:
        print(f"Pushed image {image}", file=sys.stderr)
        return 0
    print(f"funcwsgi: error: {push_failure(image, registry, tool, errors, process.returncode)}", file=sys.stderr)
    return 1


def push_failure(image: str, registry: str, tool: str, output: str, status: int) -> str:
    """One line for a failed push: the cause, and what to do about it."""
    lowered = output.lower()
    reason = _last_line(output)
    if any(sign in lowered for sign in MISSING_SIGNS):
        return f"there is no local image {image} to push; build it first ('funcwsgi build --push' builds and pushes)"
    if any(sign in lowered for sign in PLAIN_HTTP_SIGNS):
        return f"the registry {registry} answers plain HTTP, not HTTPS; list it under insecure registries in {tool}'s configuration, or serve it with TLS"
    if any(sign in lowered for sign in UNREACHABLE_SIGNS):
        return f"cannot reach the registry {registry} to push {image} ({reason}); check the registry's address and that it is running"
    if any(sign in lowered for sign in LOGIN_SIGNS):
        return f"the registry {registry} refused {image}: not logged in, or not allowed to push there; log in with '{tool} login {registry}' and push again"
    return f"pushing {image} failed ({tool} exit status {status}): {reason or 'no reason given'}"


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""
