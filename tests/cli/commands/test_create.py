from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from funcwsgi.cli.project import load_project


def test_creates_a_project_without_platform_code(project: Path):
    names = sorted(str(path.relative_to(project)) for path in project.rglob("*") if path.is_file())
    assert names == [".gitignore", "func.yaml", "handler.py", "requirements.txt", "tests/test_handler.py"]
    imports = [line for line in (project / "handler.py").read_text().splitlines() if line.startswith(("import ", "from "))]
    assert not [line for line in imports if "funcwsgi" in line or "sdk" in line]
    assert ".func/" in (project / ".gitignore").read_text().splitlines()
    loaded = load_project(project)
    assert (loaded.name, loaded.template, loaded.handler_module, loaded.handler_function) == ("hello", "http", "handler", "main")
    assert yaml.safe_load((project / "func.yaml").read_text())["scaffolded"] is False


def test_created_tests_pass_with_the_testing_client(project: Path):
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=project, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "3 passed" in result.stdout


def test_cloudevent_template_tests_pass(cli, tmp_path: Path):
    assert cli("create", "events", "--template", "cloudevent", cwd=tmp_path).returncode == 0
    assert load_project(tmp_path / "events").template == "cloudevent"
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=tmp_path / "events", capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 passed" in result.stdout


def test_refuses_to_overwrite_and_names_the_files(cli, tmp_path: Path):
    (tmp_path / "handler.py").write_text("mine\n")
    (tmp_path / "func.yaml").write_text("name: mine\n")
    result = cli("create", ".", "--name", "mine", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"funcwsgi: error: {tmp_path} already has func.yaml, handler.py; create the function in an empty folder or remove them"
    ]
    assert (tmp_path / "handler.py").read_text() == "mine\n"
    assert not (tmp_path / "requirements.txt").exists()


def test_name_is_made_from_the_folder(cli, tmp_path: Path):
    assert cli("create", "My_Func", cwd=tmp_path).returncode == 0
    assert load_project(tmp_path / "My_Func").name == "my-func"


def test_bad_name_is_one_line(cli, tmp_path: Path):
    result = cli("create", "x", "--name", "Bad Name", cwd=tmp_path)
    assert result.returncode == 2
    assert "--name 'Bad Name' is invalid: expected a lower-case name of letters" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "x").exists()


def test_unknown_template_is_one_line(cli, tmp_path: Path):
    result = cli("create", "x", "--template", "grpc", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "funcwsgi: error: template 'grpc' is neither a built-in template (http, cloudevent, aws-lambda, azure, openfaas, fission, knative) nor a folder"
    )


def test_template_folder_with_its_own_files(cli, tmp_path: Path):
    template = tmp_path / "tpl"
    (template / "scaffolding").mkdir(parents=True)
    (template / "handler.py").write_text("def main(req, res):\n    res.set_body('from my template')\n")
    (template / "requirements.txt").write_text("")
    (template / "scaffolding" / "run.sh").write_text("#!/bin/sh\necho custom\n")
    assert cli("create", "fn", "--template", str(template), cwd=tmp_path).returncode == 0
    created = tmp_path / "fn"
    assert (created / "handler.py").read_text().endswith("'from my template')\n")
    assert not (created / "scaffolding").exists(), "a template's scaffolding is not copied into the project"
    assert load_project(created).template == str(template)


PLATFORM_FILES = {
    "aws-lambda": ["template.yaml", "hello_world/app.py"],
    "azure": ["host.json", "function_app.py"],
    "openfaas": ["function/handler.py", "function/__init__.py"],
    "fission": ["handler.py"],
    "knative": ["function/func.py", "function/__init__.py"],
}


@pytest.mark.parametrize("template", sorted(PLATFORM_FILES))
def test_platform_templates_in_the_platforms_layout_pass_their_tests(cli, tmp_path: Path, template: str):
    assert cli("create", "fn", "--template", template, cwd=tmp_path).returncode == 0
    created = tmp_path / "fn"
    for name in PLATFORM_FILES[template]:
        assert (created / name).is_file(), name
    assert load_project(created).template == template
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=created, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "3 passed" in result.stdout


def test_every_python_template_ships_tests_and_the_greeting_ones_share_one_file():
    """One tests/test_handler.py for the templates that greet, the path its only difference (issue 45)."""
    from funcwsgi.cli.commands.create import GREETING_PATHS, GREETING_TEST
    from funcwsgi.cli.scaffolding import BUILTIN_TEMPLATES, template_dir

    own_tests = {name for name in BUILTIN_TEMPLATES if (template_dir(name) / "tests" / "test_handler.py").is_file()}
    assert own_tests.isdisjoint(GREETING_PATHS), "a greeting template with a copy of the shared test file"
    assert own_tests | set(GREETING_PATHS) == set(BUILTIN_TEMPLATES)
    assert GREETING_TEST.read_text().count('PATH = "{{path}}"') == 1


# -- names and paths refused before anything is written (each one line, exit 2) -------------------------


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(["123"], id="folder-of-digits"),
        pytest.param(["x", "--name", "123"], id="number"),
        pytest.param(["x", "--name", "9abc"], id="leading-digit"),
        pytest.param(["x", "--name", "0x1f"], id="hex-number"),
        pytest.param(["x", "--name", ""], id="empty"),
    ],
)
def test_a_name_not_starting_with_a_letter_is_refused(call, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str]):
    monkeypatch.chdir(tmp_path)
    status, _, err = call("create", *args)
    assert status == 2
    assert len(err.strip().splitlines()) == 1, err
    assert "expected a lower-case name of letters, digits and '-', starting with a letter" in err
    assert list(tmp_path.iterdir()) == [], "nothing written"


@pytest.mark.parametrize("name", ["true", "no", "null", "on"])
def test_a_name_yaml_would_read_as_another_type_reads_back_as_written(call, tmp_path: Path, name: str):
    status, _, err = call("create", str(tmp_path / "fn"), "--name", name)
    assert status == 0, err
    assert load_project(tmp_path / "fn").name == name


def test_a_folder_that_is_a_file_is_one_line(call, tmp_path: Path):
    (tmp_path / "handler.py").write_text("")
    status, _, err = call("create", str(tmp_path / "handler.py"))
    assert status == 2
    assert err == f"funcwsgi: error: DIR {str(tmp_path / 'handler.py')!r} is invalid: {tmp_path / 'handler.py'} is a file: expected a folder to create the project in\n"


def test_a_folder_that_cannot_be_made_is_one_line_naming_the_path_and_the_reason(call, tmp_path: Path):
    (tmp_path / "afile").write_text("")
    status, _, err = call("create", str(tmp_path / "afile" / "fn"))
    assert status == 2
    assert err == f"funcwsgi: error: cannot create {tmp_path / 'afile'}: Not a directory\n"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["afile"]


def test_a_write_that_fails_midway_removes_what_it_wrote(tmp_path: Path):
    from funcwsgi.cli.commands.create import write_project
    from funcwsgi.cli.project import ProjectError

    # The second file needs a folder where the first one is: writing it fails after the first was written.
    with pytest.raises(ProjectError, match=r"^cannot create .*/fn/tests: Not a directory$"):
        write_project(tmp_path / "fn", {"handler.py": b"", "tests": b"", "tests/test_handler.py": b""})
    assert list(tmp_path.iterdir()) == [], "the folder it made is gone too"
