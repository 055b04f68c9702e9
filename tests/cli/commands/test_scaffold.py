from __future__ import annotations

import os
from pathlib import Path

from funcwsgi.cli.project import load_project

SCAFFOLDING = ["Dockerfile", "build.sh", "f", "gunicorn.conf.py", "run.sh", "service.py"]


def test_writes_dist_and_sets_scaffolded(cli, project: Path):
    result = cli("scaffold", cwd=project)
    assert result.returncode == 0, result.stderr
    dist = project / "dist"
    assert sorted(os.listdir(dist)) == SCAFFOLDING
    assert os.readlink(dist / "f") == ".."
    assert (dist / "f" / "handler.py").samefile(project / "handler.py")
    assert os.access(dist / "run.sh", os.X_OK) and os.access(dist / "build.sh", os.X_OK)
    assert "funcwsgi-runtime:" in (dist / "Dockerfile").read_text()
    assert "{{" not in (dist / "Dockerfile").read_text()
    assert load_project(project).scaffolded is True
    text = (project / "func.yaml").read_text()
    assert "scaffolded: true      # 'funcwsgi scaffold' sets this" in text, "the comment is kept"


def test_refuses_to_overwrite_unless_forced(cli, project: Path):
    assert cli("scaffold", cwd=project).returncode == 0
    (project / "dist" / "run.sh").write_text("#!/bin/sh\n# mine\n")
    again = cli("scaffold", cwd=project)
    assert again.returncode == 2
    assert "dist/run.sh" in again.stderr and "pass --force to replace them" in again.stderr
    assert (project / "dist" / "run.sh").read_text() == "#!/bin/sh\n# mine\n"
    assert cli("scaffold", "--force", cwd=project).returncode == 0
    assert "service.py" in (project / "dist" / "run.sh").read_text()


def test_output_elsewhere_leaves_func_yaml_alone(cli, project: Path, tmp_path: Path):
    out = tmp_path / "service"
    result = cli("scaffold", "--output", str(out), cwd=project)
    assert result.returncode == 0, result.stderr
    assert sorted(os.listdir(out)) == SCAFFOLDING
    assert (out / "f").resolve() == project.resolve()
    assert load_project(project).scaffolded is False


def test_template_scaffolding_overrides_the_default(cli, tmp_path: Path):
    template = tmp_path / "tpl"
    (template / "scaffolding").mkdir(parents=True)
    (template / "handler.py").write_text("def main(req, res):\n    pass\n")
    (template / "scaffolding" / "run.sh").write_text("#!/bin/sh\necho custom run\n")
    (template / "scaffolding" / "extra.txt").write_text("added\n")
    assert cli("create", "fn", "--template", str(template), cwd=tmp_path).returncode == 0
    assert cli("scaffold", cwd=tmp_path / "fn").returncode == 0
    dist = tmp_path / "fn" / "dist"
    assert (dist / "run.sh").read_text() == "#!/bin/sh\necho custom run\n"
    assert os.access(dist / "run.sh", os.X_OK)
    assert (dist / "extra.txt").read_text() == "added\n"
    assert "from funcwsgi.cli import main" in (dist / "service.py").read_text(), "files the template does not override are the default ones"


def test_outside_a_project_is_one_line(cli, tmp_path: Path):
    result = cli("scaffold", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip() == f"funcwsgi: error: no func.yaml in {tmp_path} or its parents; create a function with 'funcwsgi create'"


def test_an_output_that_is_a_file_is_one_line(call, project: Path):
    status, _, err = call("scaffold", str(project), "--output", str(project / "handler.py"))
    assert status == 2
    assert (
        err
        == f"funcwsgi: error: --output {str(project / 'handler.py')!r} is invalid: {project / 'handler.py'} is a file: expected a folder to write the scaffolding into\n"
    )


def test_an_output_that_cannot_be_made_is_one_line(call, project: Path):
    output = project / "handler.py" / "dist"
    status, _, err = call("scaffold", str(project), "--output", str(output))
    assert status == 2
    assert err == f"funcwsgi: error: cannot write the scaffolding to {output}: {output}: Not a directory\n"


def test_a_write_that_fails_midway_removes_the_folder_it_made(call, project: Path, tmp_path: Path, monkeypatch):
    def refuse(self: Path, target: str, target_is_directory: bool = False) -> None:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "symlink_to", refuse)  # the link f comes last, after every file
    status, _, err = call("scaffold", str(project), "--output", str(tmp_path / "out" / "svc"))
    assert status == 2
    assert err == f"funcwsgi: error: cannot write the scaffolding to {tmp_path / 'out' / 'svc'}: {tmp_path / 'out' / 'svc' / 'f'}: Permission denied\n"
    assert not (tmp_path / "out").exists()
