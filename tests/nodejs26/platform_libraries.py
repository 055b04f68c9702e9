"""A Node fixture deployed as its platform deploys it: copied, with or without its locked dependencies.

The dependencies a fixture's package-lock.json pins (a platform's own library,
such as @azure/functions) are installed once into
``.tools/platform-libraries/<fixture>/node_modules`` with the project's npm, as
nodejs26/test/platforms/libraries.js installs them (the same stamp: the lock
file's text), and linked into the copy.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from ..support.paths import FUNCTIONS, REPO

NODE_BIN = REPO / ".tools" / "node" / "node_modules" / ".bin"
LIBRARIES = REPO / ".tools" / "platform-libraries"


def installed(fixture: str) -> Path:
    """The node_modules holding what ``fixture``'s lock file pins, installed when missing or stale."""
    source = FUNCTIONS / fixture
    target = LIBRARIES / fixture
    lock = (source / "package-lock.json").read_text(encoding="utf-8")
    stamp = target / "node_modules" / ".installed-lock"
    if stamp.is_file() and stamp.read_text(encoding="utf-8") == lock:
        return target / "node_modules"
    target.mkdir(parents=True, exist_ok=True)
    for name in ("package.json", "package-lock.json"):
        shutil.copyfile(source / name, target / name)
    env = {**os.environ, "PATH": f"{NODE_BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    subprocess.run([str(NODE_BIN / "npm"), "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=target, env=env, check=True, timeout=600)
    stamp.write_text(lock, encoding="utf-8")
    return target / "node_modules"


def deployed(fixture: str, destination: Path, *, with_library: bool) -> Path:
    """``fixture`` copied to ``destination`` (outside the runtime's tree); ``with_library``: its dependencies linked in."""
    shutil.copytree(FUNCTIONS / fixture, destination)
    if with_library:
        (destination / "node_modules").symlink_to(installed(fixture), target_is_directory=True)
    return destination
