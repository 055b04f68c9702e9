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
