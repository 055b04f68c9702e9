"""Finding the container engine (docker or podman) the CLI builds and runs images with."""

from __future__ import annotations

import os
import shutil

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
