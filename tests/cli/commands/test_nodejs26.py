"""The CLI for Node functions: `create --runtime nodejs26`, run, invoke, scaffold and a build context, as real processes.

The image build itself is in tests/container/test_nodejs26_image.py.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest
import requests

from funcwsgi.cli.scaffolding import TEMPLATES_OF

from ...support.paths import REPO
from .test_run import invoke, start_run

NODE = REPO / ".tools" / "node" / "node_modules" / ".bin" / "node"


@pytest.fixture
def node_project(cli, tmp_path: Path) -> Path:
    result = cli("create", "hello-js", "--runtime", "nodejs26", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    return tmp_path / "hello-js"


def test_create_writes_a_node_project(node_project: Path):
    files = sorted(str(path.relative_to(node_project)) for path in node_project.rglob("*") if path.is_file())
    assert files == [".gitignore", "func.yaml", "handler.js", "package.json", "test/handler.test.js"]
    text = (node_project / "func.yaml").read_text()
    assert "\nruntime: nodejs26\n" in text and "handler.js" in text
    assert json.loads((node_project / "package.json").read_text())["name"] == "hello-js"
    assert "sdk" not in (node_project / "handler.js").read_text(), "the function imports nothing of the runtime"


def test_the_created_tests_pass_with_node_test(node_project: Path):
    result = subprocess.run([str(NODE), "--test"], cwd=node_project, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "# pass 3" in result.stdout or "pass 3" in result.stdout


def test_a_python_only_template_is_one_line(cli, tmp_path: Path):
    result = cli("create", "events", "--runtime", "nodejs26", "--template", "cloudevent", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip() == f"funcwsgi: error: template 'cloudevent' has no nodejs26 version; nodejs26 templates: {', '.join(TEMPLATES_OF['nodejs26'])}"


#: The Node templates of platforms without a library of their own: files in the platform's own layout.
LIBRARY_FREE_TEMPLATES = {
    "aws-lambda": ["template.yaml", "hello-world/app.mjs", "package.json", "test/app.test.mjs"],
    "fission": ["handler.js", "package.json", "test/handler.test.mjs"],
}


def test_every_node_platform_template_is_checked():
    checked = {*LIBRARY_FREE_TEMPLATES, *PLATFORM_TEMPLATES}
    assert sorted(checked) == sorted(name for name in TEMPLATES_OF["nodejs26"] if name != "http")


@pytest.mark.slow("creates a project, runs its node --test, then serves it with funcwsgi run")
@pytest.mark.parametrize("template", sorted(LIBRARY_FREE_TEMPLATES))
def test_library_free_platform_templates_pass_their_tests_and_run(cli, cli_env, tmp_path: Path, template: str):
    result = cli("create", "fn", "--runtime", "nodejs26", "--template", template, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    created = tmp_path / "fn"
    for name in LIBRARY_FREE_TEMPLATES[template]:
        assert (created / name).is_file(), name
    assert f'HANDLER_PLATFORM: "{template}"' in (created / "func.yaml").read_text()
    tested = subprocess.run([str(NODE), "--test"], cwd=created, capture_output=True, text=True, timeout=120)
    assert tested.returncode == 0 and "pass 3" in tested.stdout, tested.stdout + tested.stderr
    server, url, _ = start_run(created, cli_env)
    try:
        answer = requests.get(url + "/?name=you")
        assert answer.headers["Content-Type"].startswith("application/json"), (answer.status_code, answer.text, server.stdout, server.stderr)
        assert answer.json() == {"message": "Hello, you!"}
        assert requests.post(url + "/", json={"name": "JSON"}).json() == {"message": "Hello, JSON!"}
        assert f"Calling it with the {template} contract" in server.stdout
    finally:
        server.stop()


def test_an_unknown_runtime_in_func_yaml_is_one_line(cli, node_project: Path):
    (node_project / "func.yaml").write_text((node_project / "func.yaml").read_text().replace("runtime: nodejs26", "runtime: ruby"))
    result = cli("scaffold", cwd=node_project)
    assert result.returncode == 2
    assert result.stderr.strip().endswith("runtime is 'ruby': expected 'python' or 'nodejs26'"), result.stderr


def test_run_and_invoke_a_node_function(node_project: Path, cli_env):
    server, url, folder = start_run(node_project, cli_env)
    try:
        assert sorted(path.name for path in folder.iterdir()) == ["Dockerfile", "build.sh", "f", "run.json", "run.sh"]
        assert requests.get(url + "/?name=you").json() == {"message": "Hello, you!"}
        invoked = invoke(node_project, cli_env, "--data", '{"name": "JSON"}')
        assert invoked.returncode == 0, invoked.stderr
        assert invoked.stdout.startswith("HTTP 200 OK") and '"message": "Hello, JSON!"' in invoked.stdout
        assert "Starting nodejs26 server 127.0.0.1:" in server.stdout
        server.signal(signal.SIGTERM)
        assert server.wait_exit(30) == 0
    finally:
        server.stop()
    assert not folder.exists(), "the run's scaffolding is removed"


def test_run_installs_declared_dependencies_into_node_modules(node_project: Path, cli_env, tmp_path: Path):
    # A dependency from a folder: npm installs it without the registry.
    helper = tmp_path / "greeting"
    helper.mkdir()
    (helper / "package.json").write_text(json.dumps({"name": "greeting", "version": "1.0.0", "type": "module", "main": "index.js"}))
    (helper / "index.js").write_text("export const greet = (name) => `Hi, ${name}!`;\n")
    manifest = json.loads((node_project / "package.json").read_text())
    manifest["dependencies"] = {"greeting": f"file:{helper}"}
    (node_project / "package.json").write_text(json.dumps(manifest))
    (node_project / "handler.js").write_text("import { greet } from 'greeting';\nexport const main = (req) => greet(req.query.name);\n")
    server, url, _ = start_run(node_project, cli_env)
    try:
        assert requests.get(url + "/?name=dep").text == "Hi, dep!"
        assert (node_project / "node_modules" / "greeting").exists()
    finally:
        server.stop()


def test_reload_is_refused_for_a_node_function(cli, node_project: Path):
    result = cli("run", "--reload", cwd=node_project)
    assert result.returncode == 2
    assert result.stderr.strip().endswith("--reload is for Python functions; a nodejs26 function restarts with each 'funcwsgi run'")


def test_scaffold_writes_the_node_scaffolding(cli, node_project: Path):
    result = cli("scaffold", cwd=node_project)
    assert result.returncode == 0, result.stderr
    dist = node_project / "dist"
    assert sorted(path.name for path in dist.iterdir()) == ["Dockerfile", "build.sh", "f", "run.sh"]
    assert "FROM ${RUNTIME_IMAGE}" in (dist / "Dockerfile").read_text()
    assert "ARG RUNTIME_IMAGE=funcwsgi-nodejs26:" in (dist / "Dockerfile").read_text()
    assert str(REPO / "nodejs26" / "bin" / "serve") in (dist / "run.sh").read_text()
    assert os.access(dist / "run.sh", os.X_OK)
    assert "scaffolded: true" in (node_project / "func.yaml").read_text()


def test_the_scaffolded_run_script_serves_the_function(cli, node_project: Path, cli_env):
    assert cli("scaffold", cwd=node_project).returncode == 0
    server, url, _ = start_run(node_project, cli_env)
    try:
        assert requests.get(url + "/?name=dist").json() == {"message": "Hello, dist!"}
    finally:
        server.stop()


def test_a_bad_run_argument_is_one_line(cli, node_project: Path):
    assert cli("scaffold", cwd=node_project).returncode == 0
    result = subprocess.run([str(node_project / "dist" / "run.sh"), "not-a-setting"], capture_output=True, text=True, timeout=30)
    assert result.returncode == 2
    assert result.stderr.strip() == "run.sh: argument 'not-a-setting' is invalid: expected NAME=value of a setting, e.g. SERVER_CALL_TIMEOUT=30"


def test_build_context_needs_no_requirements_txt(cli, node_project: Path):
    result = cli("build", "--context-only", cwd=node_project)
    assert result.returncode == 0, result.stderr
    context = node_project / ".func" / "build" / "0"
    assert "funcwsgi-nodejs26:" in (context / "Dockerfile").read_text()
    assert (context / "f").resolve() == node_project.resolve()


#: The platforms' templates (docs/platforms.md): their layout, and where their function answers.
PLATFORM_TEMPLATES = {
    "azure": (["host.json", "package.json", "src/functions/hello.js", "test/hello.test.js"], "/api/hello"),
    "functions-framework": (["index.js", "package.json", "test/index.test.js"], "/any/path"),
}
REGISTER = REPO / "nodejs26" / "sdk" / "register.js"


@pytest.mark.parametrize("template", sorted(PLATFORM_TEMPLATES))
def test_platform_templates_in_the_platforms_layout(cli, tmp_path: Path, cli_env, template: str):
    result = cli("create", "fn", "--runtime", "nodejs26", "--template", template, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    created = tmp_path / "fn"
    files, path = PLATFORM_TEMPLATES[template]
    for name in files:
        assert (created / name).is_file(), name
    assert not (created / "handler.js").exists()
    # Its own tests, with the runtime's stand-in for the platform's library (nothing installed yet).
    tests = subprocess.run([str(NODE), "--import", str(REGISTER), "--test"], cwd=created, capture_output=True, text=True, timeout=120)
    assert tests.returncode == 0, tests.stdout + tests.stderr
    assert "pass 3" in tests.stdout
    # 'funcwsgi run' installs the library it declares and serves the function at the platform's path.
    server, url, _ = start_run(created, cli_env)
    try:
        assert requests.get(url + path + "?name=you").json() == {"message": "Hello, you!"}
        assert requests.post(url + path, json={"name": "JSON"}).json() == {"message": "Hello, JSON!"}
    finally:
        server.stop()
    assert (created / "node_modules" / json.loads((created / "package.json").read_text())["dependencies"].popitem()[0]).is_dir()
