"""Which platform's contract a function gets: the signals, their order, HANDLER_PLATFORM, the ambiguity warnings."""

from __future__ import annotations

import logging

import pytest

from funcwsgi import compat
from funcwsgi.compat import recognise, resolve
from funcwsgi.config import Config
from tests.support.paths import FUNCTIONS


def config(**environ: str) -> Config:
    return Config.from_env(environ)


@pytest.mark.parametrize(
    ("environ", "platform"),
    [
        pytest.param({"HANDLER_FOLDER": str(FUNCTIONS / "hello")}, "funcwsgi", id="no-signal-is-ours"),
        pytest.param({"_HANDLER": "app.lambda_handler"}, "aws-lambda", id="lambda-handler"),
        pytest.param({"AWS_LAMBDA_FUNCTION_NAME": "f"}, "aws-lambda", id="lambda-function-name"),
        pytest.param({"AWS_EXECUTION_ENV": "AWS_Lambda_python3.12"}, "aws-lambda", id="lambda-execution-env"),
        pytest.param({"HANDLER_FOLDER": str(FUNCTIONS / "aws_lambda_sam")}, "aws-lambda", id="sam-template"),
        pytest.param({"FUNCTIONS_WORKER_RUNTIME": "python"}, "azure", id="azure-worker-runtime"),
        pytest.param({"HANDLER_FOLDER": str(FUNCTIONS / "azure_v1")}, "azure", id="azure-host-json"),
        pytest.param({"HANDLER_FOLDER": str(FUNCTIONS / "openfaas_http"), "fprocess": "python index.py"}, "openfaas", id="openfaas"),
        pytest.param({"HANDLER_FOLDER": str(FUNCTIONS / "knative_instance")}, "knative", id="knative-func-yaml"),
        pytest.param({"HANDLER_FOLDER": str(FUNCTIONS / "knative_handle"), "LISTEN_ADDRESS": "0.0.0.0:8080"}, "knative", id="knative-listen-address"),
        pytest.param({"USERFUNCVOL": "/tmp"}, "fission", id="fission"),
        pytest.param({"_HANDLER": "app.h", "HANDLER_PLATFORM": "funcwsgi"}, "funcwsgi", id="forced"),
    ],
)
def test_signals(environ, platform):
    assert recognise(config(**environ))[0] == platform


def test_knative_layout_without_its_signal_is_not_knative():
    assert recognise(config(HANDLER_FOLDER=str(FUNCTIONS / "knative_handle")))[0] == "funcwsgi"


def test_order_and_the_ambiguity_warning(caplog, monkeypatch):
    monkeypatch.setattr(compat, "_warned", set())
    both = config(_HANDLER="app.lambda_handler", LAMBDA_TASK_ROOT=str(FUNCTIONS / "aws_lambda_http"), FUNCTIONS_WORKER_RUNTIME="python")
    assert recognise(both)[0] == "aws-lambda"  # AWS Lambda is asked before Azure
    with caplog.at_level(logging.WARNING, logger="funcwsgi.compat"):
        resolved = resolve(both)
    assert resolved.handler_platform == "aws-lambda"
    assert [r.getMessage() for r in caplog.records] == [
        "Signals of several platforms (aws-lambda, azure): calling the function with the aws-lambda contract "
        "(_HANDLER=app.lambda_handler); set HANDLER_PLATFORM to one of azure to choose another"
    ]


def test_resolve_is_idempotent():
    first = resolve(config(_HANDLER="hello_world/app.lambda_handler", LAMBDA_TASK_ROOT=str(FUNCTIONS / "aws_lambda_sam")))
    assert (first.handler_folder, first.handler_module_name, first.handler_function_name) == (
        str(FUNCTIONS / "aws_lambda_sam" / "hello_world"), "app", "lambda_handler"
    )
    assert resolve(first) == first


def test_a_lambda_named_handler_without_lambda_signals_warns(caplog, monkeypatch, tmp_path):
    monkeypatch.setattr(compat, "_warned", set())
    (tmp_path / "handler.py").write_text("def lambda_handler(event, context):\n    return 'x'\n")
    settings = resolve(config(HANDLER_FOLDER=str(tmp_path), HANDLER_FUNCTION_NAME="lambda_handler"))
    with caplog.at_level(logging.WARNING, logger="funcwsgi.compat"):
        compat.load_function(settings)
    (message,) = [r.getMessage() for r in caplog.records]
    assert "called with the Kyma <=3.12/Kubeless contract" in message and "HANDLER_PLATFORM=aws-lambda" in message


def test_dotted_and_slashed_lambda_handlers(tmp_path):
    for handler in ("src/app.handler", "src.app.handler"):
        located = resolve(config(_HANDLER=handler, LAMBDA_TASK_ROOT=str(tmp_path)))
        assert (located.handler_folder, located.handler_module_name, located.handler_function_name) == (str(tmp_path / "src"), "app", "handler")


def test_platform_ports():
    assert config(LISTEN_ADDRESS="127.0.0.1:9123").server_port == 9123
    assert config(LISTEN_ADDRESS="127.0.0.1:9123").server_host == "127.0.0.1"
    assert config(upstream_url="http://127.0.0.1:5000").server_port == 5000
    assert config(USERFUNCVOL="/tmp").server_port == 8888
    assert config(USERFUNCVOL="/tmp", SERVER_PORT="1234").server_port == 1234


def test_two_openfaas_projects_in_one_process():
    from werkzeug.test import Client

    from funcwsgi import make_app

    http = Client(make_app(handler_folder=str(FUNCTIONS / "openfaas_http")))
    flask_style = Client(make_app(handler_folder=str(FUNCTIONS / "openfaas_flask")))
    assert http.post("/", data="x").text == "Hello from OpenFaaS! x"
    assert flask_style.post("/", data="y").text == "str:'y'"


def test_the_platforms_table_is_the_registry():
    """docs/platforms.md's table of signals says what compat.PLATFORMS declares, in its order."""
    from pathlib import Path

    page = (Path(__file__).resolve().parents[2] / "docs" / "platforms.md").read_text()
    table = page.split("| order | platform | signals | page |\n|---|---|---|---|\n", 1)[1].split("\n\n", 1)[0]
    rows = [[cell.strip() for cell in line.strip("|").split(" | ")] for line in table.splitlines()]
    expected = [
        [str(compat.PLATFORMS[name].precedence), compat.PLATFORMS[name].title, compat.PLATFORMS[name].signals]
        for name in compat.RECOGNITION_ORDER
    ]
    unrecognised = [platform for platform in compat.PLATFORMS.values() if platform.precedence is None]
    expected.append(["—", ", ".join(platform.title for platform in unrecognised), unrecognised[0].signals])
    assert [row[:3] for row in rows] == expected
    assert [row[3].split("](")[1].rstrip(")") for row in rows[:-1]] == [compat.PLATFORMS[name].page for name in compat.RECOGNITION_ORDER]


def test_every_platform_declared_once_has_its_module_template_and_page():
    from pathlib import Path

    from funcwsgi.cli.project import RUNTIME
    from funcwsgi.cli.scaffolding import TEMPLATES, TEMPLATES_OF
    from funcwsgi.config import PLATFORMS

    assert tuple(compat.PLATFORMS) == PLATFORMS
    for name, platform in compat.PLATFORMS.items():
        assert (Path(__file__).resolve().parents[2] / "docs" / platform.page).is_file(), name
        if platform.module is None:
            assert platform.precedence is None and not platform.own_loader and platform.template is None, name
            continue
        module = platform.contract()
        assert callable(getattr(compat.signals, platform.module)), name  # recognised without importing the contract
        assert callable(module.locate) and callable(module.invoker), name
        assert callable(getattr(module, "load", None)) is platform.own_loader, name
        assert platform.template in TEMPLATES_OF[RUNTIME] and (TEMPLATES / platform.template).is_dir(), name
