"""Asked for and impossible is a failure: the container tests never skip once FUNCWSGI_CONTAINER_TESTS=1."""

from __future__ import annotations

import os
import subprocess
import sys

from ..support.paths import REPO


def test_an_environment_without_dockerd_fails_the_container_tests_with_the_reason(tmp_path):
    """Mutation caught: ``cannot_run`` in tests/container/conftest.py skipping instead of failing."""
    # A PATH with this interpreter's folder only: no dockerd on it. Debian's CLI at
    # /usr/bin/docker may still be found, and dockerd is what the fixture needs too.
    env = {**os.environ, "FUNCWSGI_CONTAINER_TESTS": "1", "PATH": os.path.dirname(sys.executable), "FUNCWSGI_TEST_CACHE": str(tmp_path)}
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/container/test_images.py", "-k", "runtime_image_serves"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert "1 error" in result.stdout and "skipped" not in result.stdout, result.stdout
    assert "container tests cannot run here (FUNCWSGI_CONTAINER_TESTS=1): docker is not installed" in result.stdout
