"""``funcwsgi build``: the context it writes and what build.sh sends to the engine.

The image itself is built by a real docker in tests/container/ (make test-container);
here the engine is a small script that records its arguments and the context it
was sent, so the context's content can be checked on any machine.
"""

from __future__ import annotations

import os
import tarfile
from pathlib import Path

import pytest

from funcwsgi import __version__


@pytest.fixture
def recording_engine(tmp_path: Path) -> tuple[Path, Path]:
    """An executable standing in for docker: writes its arguments and its stdin (the context tar)."""
    record = tmp_path / "engine-record"
    record.mkdir()
    engine = tmp_path / "engine"
    engine.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > {record}/args\ncat > {record}/context.tar\n')
    engine.chmod(0o755)
    return engine, record


def members(record: Path) -> list[str]:
    with tarfile.open(record / "context.tar") as archive:
        return sorted(member.name for member in archive.getmembers())


def test_context_only_writes_a_complete_context(cli, project: Path):
    result = cli("build", "--context-only", cwd=project)
    assert result.returncode == 0, result.stderr
    context = project / ".func" / "build" / "0"
    assert f"Wrote the build context of 'hello' to {context}" in result.stdout
    assert sorted(os.listdir(context)) == ["Dockerfile", "build.sh", "f", "gunicorn.conf.py", "run.sh", "service.py"]
    assert os.readlink(context / "f") == "../../.."
    assert f"ARG RUNTIME_IMAGE=funcwsgi-runtime:{__version__}" in (context / "Dockerfile").read_text()
    second = cli("build", "--context-only", cwd=project)
    assert str(project / ".func" / "build" / "1") in second.stdout, "a second build gets the next free folder"


def test_build_sends_the_function_as_f_and_cleans_up(cli, project: Path, recording_engine):
    engine, record = recording_engine
    (project / "func.yaml").write_text((project / "func.yaml").read_text().replace("args: []             # appended to the image build", 'args: ["--label", "team=a"] # appended to the image build'))
    (project / "helper.py").write_text("X = 1\n")
    (project / ".func" / "junk").mkdir(parents=True)
    result = cli("build", "--image", "hello:1", "--", "--network", "host", cwd=project, env={"CONTAINER_ENGINE": str(engine), "PIP_CERT": ""})
    assert result.returncode == 0, result.stderr
    assert "Building image hello:1 with engine from" in result.stderr
    args = (record / "args").read_text().splitlines()
    assert args == ["build", "--tag", "hello:1", "--label", "team=a", "--network", "host", "-"]
    names = members(record)
    assert {"Dockerfile", "build.sh", "run.sh", "service.py", "gunicorn.conf.py", "f/handler.py", "f/helper.py", "f/requirements.txt"} <= set(names)
    assert not [name for name in names if name.startswith("f/.func")], "the .func folder is never sent"
    assert not (project / ".func" / "build" / "0").exists(), "the context is removed after the build"
    assert (project / "handler.py").exists()


def test_keep_and_pip_cert_secret(cli, project: Path, recording_engine, tmp_path: Path):
    engine, record = recording_engine
    bundle = tmp_path / "ca.pem"
    bundle.write_text("not really a CA\n")
    result = cli("build", "--keep", "--runtime-image", "base:9", cwd=project, env={"CONTAINER_ENGINE": str(engine), "PIP_CERT": str(bundle)})
    assert result.returncode == 0, result.stderr
    args = (record / "args").read_text().splitlines()
    assert args == ["build", "--tag", "hello:latest", "--secret", f"id=pip-cert,src={bundle}", "--build-arg", "RUNTIME_IMAGE=base:9", "-"]
    assert (project / ".func" / "build" / "0" / "Dockerfile").exists()


def test_scaffolded_project_builds_from_dist(cli, project: Path, recording_engine):
    engine, record = recording_engine
    assert cli("scaffold", cwd=project).returncode == 0
    (project / "dist" / "service.py").write_text((project / "dist" / "service.py").read_text() + "# owned by me\n")
    result = cli("build", cwd=project, env={"CONTAINER_ENGINE": str(engine), "PIP_CERT": ""})
    assert result.returncode == 0, result.stderr
    assert str(project / "dist") in result.stderr
    names = members(record)
    assert "f/handler.py" in names and not [name for name in names if name.startswith("f/dist")]
    with tarfile.open(record / "context.tar") as archive:
        assert archive.extractfile("service.py").read().decode().endswith("# owned by me\n")
    assert not (project / ".func" / "build").exists(), "nothing is generated for a scaffolded project"


def test_failed_build_is_reported(cli, project: Path, tmp_path: Path):
    failing = tmp_path / "failing-engine"
    failing.write_text("#!/bin/sh\ncat > /dev/null\necho 'no space left' >&2\nexit 7\n")
    failing.chmod(0o755)
    result = cli("build", cwd=project, env={"CONTAINER_ENGINE": str(failing), "PIP_CERT": ""})
    assert result.returncode == 1
    assert "funcwsgi: error: building hello:latest failed (exit status 7); see the builder's output above" in result.stderr
    assert not (project / ".func" / "build" / "0").exists()


def test_no_engine_is_one_line(cli, project: Path, tmp_path: Path):
    result = cli("build", cwd=project, env={"PATH": str(tmp_path / "empty")})
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "funcwsgi: error: build needs docker or podman and neither is installed; install one (or set CONTAINER_ENGINE), "
        "or write the context with --context-only and build it with another builder"
    )
    bad = cli("build", cwd=project, env={"CONTAINER_ENGINE": "dockr"})
    assert bad.returncode == 2
    assert "CONTAINER_ENGINE='dockr' is not an installed program" in bad.stderr


def test_missing_requirements_is_one_line(cli, project: Path):
    (project / "requirements.txt").unlink()
    result = cli("build", "--context-only", cwd=project)
    assert result.returncode == 2
    assert "requirements.txt is missing; the image installs the function's requirements from it (an empty file will do)" in result.stderr
