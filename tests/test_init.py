"""`funcwsgi:app` is built lazily: importing the package does no work."""

from __future__ import annotations

import sys

from .support.paths import function_folder
from .support.processes import base_env, run_to_exit


def test_import_does_no_work():
    # A broken environment does not matter until the app is asked for.
    result = run_to_exit([sys.executable, "-c", "import funcwsgi; print('imported')"], base_env(SERVER_PORT="abc", HANDLER_FOLDER="/nope"))
    assert result.returncode == 0
    assert result.stdout == "imported\n"


def test_app_is_built_on_first_access():
    code = "import funcwsgi\nfrom werkzeug.test import Client\nprint(Client(funcwsgi.app).get('/').status_code)\nassert funcwsgi.app is funcwsgi.app"
    result = run_to_exit([sys.executable, "-c", code], base_env(HANDLER_FOLDER=function_folder("hello")))
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0].startswith("Importing function sources from")
    assert result.stdout.splitlines()[-1] == "204"


def test_app_with_a_broken_environment_exits_2():
    result = run_to_exit([sys.executable, "-c", "from funcwsgi import app"], base_env(HANDLER_FOLDER="/nope"))
    assert result.returncode == 2
    assert result.stderr.strip() == "funcwsgi: error: HANDLER_FOLDER '/nope' does not exist"


def test_unknown_attribute():
    import funcwsgi

    try:
        funcwsgi.nothing  # noqa: B018
    except AttributeError as error:
        assert "nothing" in str(error)
    else:  # pragma: no cover
        raise AssertionError("expected AttributeError")


def test_import_leaves_the_request_path_unimported_until_a_public_name_is_asked_for():
    """`funcwsgi serve` holds the garbage collector back before the request path is imported (funcwsgi.process)."""
    code = (
        "import sys, funcwsgi\n"
        "print('funcwsgi.application' in sys.modules, 'funcwsgi.config' in sys.modules)\n"
        "from funcwsgi import Config, FunctionRequest, FunctionResponse, FunctionService, make_app, ConfigError, LoadError, StartupError\n"
        "print(make_app.__module__, Config is sys.modules['funcwsgi.config'].Config, sorted(set(funcwsgi.__all__) - set(dir(funcwsgi))))"
    )
    result = run_to_exit([sys.executable, "-c", code], base_env())
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["False False", "funcwsgi.application True []"]
