from __future__ import annotations

import os

import pytest

from funcwsgi.config import Config
from funcwsgi.errors import LoadError
from funcwsgi.loader import load_function, wrap_callable
from funcwsgi.signatures import Signature

from .conftest import function_folder


def load(scenario_or_path: str, **settings):
    folder = scenario_or_path if os.path.isabs(scenario_or_path) else function_folder(scenario_or_path)
    return load_function(Config.from_env({}, handler_folder=folder, **settings))


def test_loads_the_function_with_its_signature():
    loaded = load("hello")
    assert loaded.name == "main"
    assert loaded.signature is Signature.REQ_RES
    assert loaded.path == os.path.join(function_folder("hello"), "handler.py")


def test_sibling_modules_are_importable():
    loaded = load("siblings")
    assert loaded.module.GREETING == "hello from a sibling module"


def test_missing_folder():
    with pytest.raises(LoadError, match=r"HANDLER_FOLDER '/no/such/folder' does not exist"):
        load("/no/such/folder")


def test_folder_is_a_file():
    path = os.path.join(function_folder("hello"), "handler.py")
    with pytest.raises(LoadError, match="is a file, expected the folder"):
        load(path)


def test_missing_file_lists_what_the_folder_holds(tmp_path):
    (tmp_path / "app.py").write_text("")
    (tmp_path / "requirements.txt").write_text("")
    with pytest.raises(LoadError) as caught:
        load(str(tmp_path))
    assert str(caught.value) == f"no handler.py in {tmp_path}; the folder holds: app.py, requirements.txt"


def test_empty_folder(tmp_path):
    with pytest.raises(LoadError, match="the folder is empty"):
        load(str(tmp_path))


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every folder")
def test_unreadable_folder(tmp_path):  # pragma: no cover - CI runs as root
    tmp_path.chmod(0)
    try:
        with pytest.raises(LoadError, match="cannot be read"):
            load(str(tmp_path))
    finally:
        tmp_path.chmod(0o755)


def test_other_module_name(tmp_path):
    (tmp_path / "fn.py").write_text("def run(req):\n    return 'x'\n")
    loaded = load_function(Config.from_env({"HANDLER_FOLDER": str(tmp_path), "MOD_NAME": "fn", "FUNC_HANDLER": "run"}))
    assert loaded.name == "run"
    assert loaded.signature is Signature.REQ


def test_missing_function_lists_the_callables():
    with pytest.raises(LoadError) as caught:
        load("no_main")
    path = os.path.join(function_folder("no_main"), "handler.py")
    assert str(caught.value) == f"no function 'main' in {path}; found: helper, mian"


def test_not_callable():
    with pytest.raises(LoadError, match=r"'main' in .*handler.py is an int, not a function"):
        load("not_callable")


def test_syntax_error_names_file_and_line():
    with pytest.raises(LoadError) as caught:
        load("syntax_error")
    path = os.path.join(function_folder("syntax_error"), "handler.py")
    assert str(caught.value).startswith(f"syntax error in {path} line 1:")
    assert "def main(req, res)" in caught.value.user_traceback


def test_missing_dependency_is_named():
    with pytest.raises(LoadError) as caught:
        load("missing_dependency")
    assert "failed to import 'numpy_that_is_not_installed'" in str(caught.value)
    assert "requirements" in str(caught.value)
    assert "handler.py" in caught.value.user_traceback


def test_module_raising_at_import_shows_the_users_traceback_only():
    with pytest.raises(LoadError) as caught:
        load("import_raises")
    assert "raised KeyError: 'API_KEY'" in str(caught.value)
    user_traceback = caught.value.user_traceback
    assert "_configure" in user_traceback
    assert "funcwsgi" not in user_traceback and "importlib" not in user_traceback


def test_too_many_required_parameters():
    with pytest.raises(LoadError, match=r"takes 3 required parameters \(a, b, c\)"):
        load("required_params")


def test_wrap_callable_refuses_non_callables():
    with pytest.raises(LoadError, match="needs a callable, got a str"):
        wrap_callable("main", Config.from_env({}))


def test_hooks_are_found(tmp_path):
    (tmp_path / "handler.py").write_text("def main():\n    pass\ndef start():\n    pass\ndef ready(timeout=1, *args, **kwargs):\n    return True\n")
    loaded = load(str(tmp_path))
    assert sorted(loaded.hooks) == ["ready", "start"]


@pytest.mark.parametrize(
    ("source", "message"),
    [
        pytest.param("def stop(signal):\n    pass\n", r"^stop\(\) in .*handler.py requires 1 argument\(s\) \(signal\); the runtime calls stop\(\) with none$", id="positional"),
        pytest.param("def alive(*, deep):\n    pass\n", r"^alive\(\) in .*handler.py requires 1 argument\(s\) \(deep\);", id="keyword-only"),
        pytest.param("class start:\n    def __init__(self, pool):\n        pass\n", r"^start\(\) in .*requires 1 argument\(s\) \(pool\)", id="class"),
        pytest.param("ready = 5\n", r"^'ready' in .*handler.py is a int, not a function; the runtime calls ready\(\) with no arguments$", id="not-callable"),
    ],
)
def test_hooks_are_checked_at_load_time(tmp_path, source, message):
    (tmp_path / "handler.py").write_text("def main():\n    pass\n" + source)
    with pytest.raises(LoadError, match=message):
        load(str(tmp_path))


def test_the_function_itself_is_not_taken_for_a_hook(tmp_path):
    (tmp_path / "handler.py").write_text("def start(event, context):\n    pass\n")
    assert load(str(tmp_path), handler_function_name="start").hooks == {}
