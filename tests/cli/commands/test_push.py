"""``funcwsgi push`` and ``build --push``: which image, and the one line for each failure.

The pushes themselves go to a real registry in tests/container/test_registry.py
(make test-container); here the engine's own words, as docker and podman print
them, are turned into the line the user sees, and the CLI's checks before any
push are run as a real process.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from funcwsgi.cli.commands.push import push_failure, registry_of


@pytest.mark.parametrize(
    ("image", "registry"),
    [
        ("registry.example/team/hello:1", "registry.example"),
        ("127.0.0.1:5000/hello:1", "127.0.0.1:5000"),
        ("localhost/hello", "localhost"),
        ("team/hello:1", "docker.io"),
        ("hello", "docker.io"),
    ],
)
def test_the_registry_an_image_names(image: str, registry: str):
    assert registry_of(image) == registry


@pytest.mark.parametrize(
    ("engine_says", "expected"),
    [
        ("no basic auth credentials", "refused r.example/a:1: not logged in, or not allowed to push there; log in with 'docker login r.example'"),
        ("unauthorized: authentication required", "refused r.example/a:1: not logged in"),
        ("denied: requested access to the resource is denied", "refused r.example/a:1: not logged in"),
        ("Error: writing blob: initiating layer upload to /v2/a/blobs/uploads/ in r.example: authentication required", "refused r.example/a:1: not logged in"),
        ('Get "https://r.example/v2/": dial tcp 10.0.0.9:443: connect: connection refused', "cannot reach the registry r.example to push r.example/a:1 (Get "),
        ('Get "https://r.example/v2/": dial tcp: lookup r.example: no such host', "cannot reach the registry r.example"),
        ("An image does not exist locally with the tag: r.example/a", "there is no local image r.example/a:1 to push"),
        ("Error: r.example/a:1: image not known", "there is no local image r.example/a:1 to push"),
        ('Get "https://r.example/v2/": http: server gave HTTP response to HTTPS client', "answers plain HTTP, not HTTPS"),
        ("something else entirely\n", "pushing r.example/a:1 failed (docker exit status 1): something else entirely"),
    ],
)
def test_each_failure_is_one_line_that_says_what_to_do(engine_says: str, expected: str):
    line = push_failure("r.example/a:1", "r.example", "docker", engine_says, 1)
    assert expected in line and "\n" not in line


def test_push_needs_an_image_that_names_a_registry(cli, project: Path):
    result = cli("push", cwd=project)
    assert result.returncode == 2
    assert result.stderr == (
        f"funcwsgi: error: {project / 'func.yaml'} names no image to push: set image: REGISTRY/hello:TAG "
        "(a registry the cluster pulls from), or pass --image\n"
    )


def test_build_push_checks_the_image_before_building(cli, project: Path, tmp_path: Path):
    record = tmp_path / "engine.log"
    engine = tmp_path / "engine"
    engine.write_text(f'#!/bin/sh\necho "$@" >> {record}\nif [ "$1" = build ]; then cat > /dev/null; fi\n')
    engine.chmod(0o755)
    env = {"CONTAINER_ENGINE": str(engine), "PIP_CERT": ""}
    refused = cli("build", "--push", cwd=project, env=env)
    assert refused.returncode == 2 and not record.exists(), "nothing is built when it could not be pushed"
    done = cli("build", "--push", "--image", "r.example/hello:2", cwd=project, env=env)
    assert done.returncode == 0, done.stderr
    assert record.read_text().splitlines() == ["build --tag r.example/hello:2 -", "push r.example/hello:2"]
    both = cli("build", "--push", "--context-only", "--image", "r.example/hello:2", cwd=project, env=env)
    assert both.returncode == 2 and "--push and --context-only exclude each other" in both.stderr


def test_a_failed_push_after_a_build_is_the_exit_status(cli, project: Path, tmp_path: Path):
    engine = tmp_path / "engine"
    engine.write_text('#!/bin/sh\nif [ "$1" = build ]; then cat > /dev/null; exit 0; fi\necho "unauthorized: authentication required" >&2\nexit 1\n')
    engine.chmod(0o755)
    result = cli("build", "--push", "--image", "r.example/hello:2", cwd=project, env={"CONTAINER_ENGINE": str(engine), "PIP_CERT": ""})
    assert result.returncode == 1
    assert result.stderr.splitlines()[-1] == (
        "funcwsgi: error: the registry r.example refused r.example/hello:2: not logged in, or not allowed to push there; "
        "log in with 'engine login r.example' and push again"
    )
