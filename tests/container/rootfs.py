"""The container tests' stand-in for ``python:3.14-slim``: Debian sid with Python 3.14, made by debootstrap.

Image registries are unreachable here, so the root filesystem is bootstrapped
from the Debian mirror apt uses and cached as a tarball under
$FUNCWSGI_TEST_CACHE (default ~/.cache/funcwsgi-test). The ``base_image``
fixture imports it into the tests' daemon. ``make test`` makes the tarball
during setup (``python3 -m tests.container.rootfs``), where the cores are not
yet full: debootstrap keeps a core busy for most of a minute. Standard library
only, so it runs before the venv exists.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

BASE_IMAGE = "python:3.14-slim"
TARBALL_NAME = "python-3.14-slim-rootfs.tar"
#: What a slim image leaves out; removed after the bootstrap.
BULKY = ("usr/share/doc", "usr/share/man", "usr/share/locale", "var/cache/apt/archives", "var/lib/apt/lists")


class CannotBootstrap(Exception):
    """The tarball cannot be made here; the message says why."""


def cache_dir() -> Path:
    folder = Path(os.environ.get("FUNCWSGI_TEST_CACHE") or Path.home() / ".cache" / "funcwsgi-test")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def apt_mirror() -> str | None:
    """The Debian mirror apt is configured with (deb822 or one-line sources)."""
    for path in sorted(Path("/etc/apt").glob("sources.list.d/*.sources")):
        for line in path.read_text().splitlines():
            if line.startswith("URIs:") and "security" not in line:
                return line.split()[1]
    sources = Path("/etc/apt/sources.list")
    if sources.exists():
        for line in sources.read_text().splitlines():
            parts = line.split()
            if len(parts) > 2 and parts[0] == "deb" and "security" not in parts[1]:
                return parts[1] if not parts[1].startswith("[") else parts[2]
    return None


def tarball() -> Path:
    """The cached root filesystem, bootstrapped first if it is not there yet."""
    cached = cache_dir() / TARBALL_NAME
    if cached.exists():
        return cached
    debootstrap, mirror = shutil.which("debootstrap"), apt_mirror()
    if debootstrap is None:
        raise CannotBootstrap("debootstrap is not installed (apt-get install debootstrap)")
    if mirror is None:
        raise CannotBootstrap("no Debian mirror found in /etc/apt to bootstrap the base image from")
    with tempfile.TemporaryDirectory(prefix="funcwsgi-rootfs-", dir="/tmp") as scratch:
        root = Path(scratch) / "root"
        sys.stderr.write(f"\nbootstrapping {BASE_IMAGE} from Debian sid (cached in {cached}) ...\n")
        try:
            result = subprocess.run(
                [debootstrap, "--variant=minbase", "--include=python3.14,python3.14-venv,ca-certificates", "sid", str(root), mirror],
                capture_output=True, text=True, timeout=900,
            )
        except subprocess.TimeoutExpired:
            raise CannotBootstrap(f"debootstrap from {mirror} did not finish in 900 s") from None
        if result.returncode != 0:
            raise CannotBootstrap(f"debootstrap failed: {result.stdout[-1500:]}{result.stderr[-1500:]}")
        # Like the official image: `python3` and `python` name Python 3.14; no docs.
        for name in ("python3", "python"):
            link = root / "usr" / "bin" / name
            if link.exists() or link.is_symlink():
                link.unlink()
            link.symlink_to("python3.14")
        for bulky in BULKY:
            shutil.rmtree(root / bulky, ignore_errors=True)
        # Renamed into place only when whole: a run stopped halfway leaves no tarball to trust.
        partial = cached.with_suffix(".partial")
        subprocess.run(["tar", "-C", str(root), "-cf", str(partial), "."], check=True)
        partial.rename(cached)
    return cached


def main() -> int:
    """Make the tarball where this machine can; where it cannot, say why and leave it to the container tests to fail."""
    if os.geteuid() != 0:
        print("tests.container.rootfs: not bootstrapping the base image (debootstrap needs root); the container tests will say so")
        return 0
    try:
        print(f"tests.container.rootfs: {tarball()}")
    except CannotBootstrap as reason:
        print(f"tests.container.rootfs: not made: {reason}; the container tests will fail with this reason")
    return 0


if __name__ == "__main__":
    sys.exit(main())
