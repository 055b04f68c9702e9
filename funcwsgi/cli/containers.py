"""Finding the container engine (docker or podman) the CLI builds and runs images with."""

from __future__ import annotations

import os
import shutil
import subprocess

from ..errors import StartupError

ENGINE_ENV = "CONTAINER_ENGINE"
ENGINES = ("docker", "podman")


def find_engine(purpose: str, instead: str) -> str:
    """The engine's path: ``$CONTAINER_ENGINE``, else docker, else podman.

    ``purpose`` and ``instead`` word the error, e.g. ``"run --container"`` and
    ``"run without --container"``.
    """
    configured = os.environ.get(ENGINE_ENV)
    if configured:
        found = shutil.which(configured)
        if found is None:
            raise StartupError(f"{ENGINE_ENV}={configured!r} is not an installed program: expected docker or podman (a name or a path)")
        return found
    for name in ENGINES:
        found = shutil.which(name)
        if found is not None:
            return found
    raise StartupError(f"{purpose} needs docker or podman and neither is installed; install one (or set {ENGINE_ENV}), or {instead}")


def has_bridge(engine: str) -> bool:
    """Whether the engine's daemon has its default bridge network: docker's ``bridge``, podman's ``podman``.

    A daemon started without one (``dockerd --bridge=none``) runs containers on
    the host's network only.
    """
    network = "podman" if os.path.basename(engine).startswith("podman") else "bridge"
    found = subprocess.run([engine, "network", "inspect", network], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
    return found.returncode == 0
