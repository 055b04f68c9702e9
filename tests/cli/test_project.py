from __future__ import annotations

import json
from pathlib import Path

import pytest

from funcwsgi.cli.project import ProjectError, load_project, render_func_yaml, set_scaffolded, suggest_name


def write(folder: Path, text: str) -> Path:
    (folder / "func.yaml").write_text(text)
    return folder


def test_the_created_file_loads_with_its_defaults(tmp_path: Path):
    project = load_project(write(tmp_path, render_func_yaml("hello", "http")))
    assert project.name == "hello" and project.runtime == "python" and project.scaffolded is False
    assert project.envs == {} and project.build_args == () and project.run_args == ()
    assert project.default_image == "hello:latest"
    assert project.function_env() == {"FUNC_NAME": "hello", "HANDLER_MODULE_NAME": "handler", "HANDLER_FUNCTION_NAME": "main"}


def test_a_node_function_left_at_handler_main_names_no_handler(tmp_path: Path):
    project = load_project(write(tmp_path, render_func_yaml("hello", "azure", "nodejs26")))
    assert project.function_env() == {"FUNC_NAME": "hello"}, "nodejs26 looks for handler.js's main() itself, or a platform's layout"
    (tmp_path / "func.yaml").write_text(render_func_yaml("hello", "http", "nodejs26").replace("function: main", "function: run"))
    assert load_project(tmp_path).function_env() == {"FUNC_NAME": "hello", "HANDLER_MODULE_NAME": "handler", "HANDLER_FUNCTION_NAME": "run"}


def test_every_key(tmp_path: Path):
    write(tmp_path, """
name: shop
namespace: prod
runtime: python
template: cloudevent
image: registry.example/shop:2
handler: {module: app, function: handle}
envs: {GREETING: hi, RETRIES: 3, DEBUG: true}
labels: {team: a}
annotations: {owner: b}
build: {args: ["--network", "host"]}
run: {args: ["SERVER_WORKERS=2"]}
scaffolded: true
""")
    project = load_project(tmp_path)
    assert project.default_image == "registry.example/shop:2"
    assert project.build_args == ("--network", "host") and project.run_args == ("SERVER_WORKERS=2",)
    env = project.function_env()
    assert env["FUNC_NAMESPACE"] == "prod" and env["HANDLER_MODULE_NAME"] == "app" and env["HANDLER_FUNCTION_NAME"] == "handle"
    assert json.loads(env["FUNC_LABELS"]) == {"team": "a"} and json.loads(env["FUNC_ANNOTATIONS"]) == {"owner": "b"}
    assert (env["GREETING"], env["RETRIES"], env["DEBUG"]) == ("hi", "3", "true")


def test_found_from_a_subfolder(tmp_path: Path):
    write(tmp_path, "name: up\n")
    (tmp_path / "tests").mkdir()
    assert load_project(tmp_path / "tests").root == tmp_path


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("name: Hello\n", "name is 'Hello': expected a lower-case name of letters, digits and '-'", id="name"),
        pytest.param("namespace: x\n", "name is missing: expected the function's name", id="missing-name"),
        pytest.param("name: a\nruntime: node\n", "runtime is 'node': expected 'python' or 'nodejs26'", id="runtime"),
        pytest.param("name: a\nenvs: [A]\n", "envs is a list: expected a mapping of names to strings", id="envs-list"),
        pytest.param("name: a\nenvs: {A: [1]}\n", "envs.A is a list: expected a string", id="env-value"),
        pytest.param("name: a\nenvs: {1A: x}\n", "envs.1A is not a valid name", id="env-name"),
        pytest.param("name: a\nbuild: {args: --network host}\n", "build.args is '--network host': expected a list of arguments", id="args-string"),
        pytest.param("name: a\nbuild: [x]\n", "build is a list: expected a mapping", id="section"),
        pytest.param("name: a\nscaffolded: yes please\n", "scaffolded is 'yes please': expected true or false", id="bool"),
        pytest.param("name: a\nhandler: {module: my-module}\n", "handler.module is 'my-module': expected a Python identifier", id="module"),
        pytest.param("- a\n", "must be a mapping of keys (name: ..., envs: ...), found a list", id="not-mapping"),
        pytest.param("name: [a\n", "is not valid YAML", id="yaml"),
    ],
)
def test_invalid_file_names_the_key_and_the_problem(tmp_path: Path, text: str, message: str):
    write(tmp_path, text)
    with pytest.raises(ProjectError) as caught:
        load_project(tmp_path)
    assert message in str(caught.value)
    assert str(caught.value).startswith(str(tmp_path / "func.yaml"))
    assert "\n" not in str(caught.value)


def test_yaml_error_names_the_line(tmp_path: Path):
    write(tmp_path, "name: a\nenvs:\n  A: b\n c: d\n")
    with pytest.raises(ProjectError, match=r"func.yaml line 4 is not valid YAML"):
        load_project(tmp_path)


def test_unknown_keys_are_reported_not_fatal(tmp_path: Path):
    write(tmp_path, "name: a\nenv: {A: b}\nbuild: {argz: []}\ncolour: blue\n")
    warnings: list[str] = []
    project = load_project(tmp_path, warn=warnings.append)
    assert project.name == "a"
    assert [w.split(": ", 1)[1] for w in warnings] == [
        "unknown key 'build.argz' ignored (did you mean 'build.args'?)",
        "unknown key 'colour' ignored; known keys: name, namespace, runtime, template, image, handler.module, handler.function, envs, labels, annotations, build.args, run.args, run.secrets, secrets, scaffolded, "
        "timeout, scale.min, scale.max, resources.requests, resources.limits, deploy.target",
        "unknown key 'env' ignored (did you mean 'envs'?)",
    ]


def test_no_project(tmp_path: Path):
    with pytest.raises(ProjectError, match="no func.yaml in .* or its parents; create a function with 'funcwsgi create'"):
        load_project(tmp_path)


def test_set_scaffolded_keeps_the_rest(tmp_path: Path):
    write(tmp_path, render_func_yaml("a", "http"))
    set_scaffolded(tmp_path)
    assert load_project(tmp_path).scaffolded is True
    assert (tmp_path / "func.yaml").read_text() == render_func_yaml("a", "http").replace("scaffolded: false", "scaffolded: true")
    write(tmp_path, "name: a")
    set_scaffolded(tmp_path)
    assert (tmp_path / "func.yaml").read_text() == "name: a\nscaffolded: true\n"


@pytest.mark.parametrize(("folder", "name"), [("hello", "hello"), ("My_Func", "my-func"), ("__", ""), ("a" * 70, "a" * 63)])
def test_suggest_name(folder: str, name: str):
    assert suggest_name(folder) == name


def test_the_name_starts_with_a_letter_as_a_kubernetes_service_name_does(tmp_path: Path):
    with pytest.raises(ProjectError, match=r"name is '9abc': expected a lower-case name of letters, digits and '-', starting with a letter"):
        load_project(write(tmp_path, 'name: "9abc"\n'))
