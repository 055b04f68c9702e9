from __future__ import annotations

import dataclasses
import os

import pytest

from funcwsgi.config import Config
from funcwsgi.errors import LoadError
from funcwsgi.handler.loader import LoadedFunction, find_sources, load_function, wrap_callable
from funcwsgi.handler.signatures import Signature

from ..support.paths import function_folder


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


def test_a_module_file_that_is_a_folder_is_named_as_one(tmp_path):
    (tmp_path / "handler.py").mkdir()
    with pytest.raises(LoadError) as caught:
        load(str(tmp_path))
    assert str(caught.value) == f"{tmp_path / 'handler.py'} is a folder, expected the function's module file"


def test_empty_folder(tmp_path):
    with pytest.raises(LoadError, match="the folder is empty"):
        load(str(tmp_path))


def test_unreadable_folder():
    """The loader's own message for a folder it may not list, as the container's unprivileged user.

    Root reads every folder, and CI runs as root: the check runs in a forked child that
    drops to uid 65534 first (as itself when the tests do not run as root).
    """
    import shutil
    import tempfile

    base = tempfile.mkdtemp(prefix="funcwsgi-unreadable-")
    os.chmod(base, 0o755)  # reachable by anyone; only the folder inside is locked
    folder = os.path.join(base, "locked")
    os.mkdir(folder)
    os.chmod(folder, 0)
    read_end, write_end = os.pipe()
    try:
        pid = os.fork()
        if pid == 0:  # the child: report the message, never return into pytest
            try:
                os.close(read_end)
                if os.geteuid() == 0:
                    os.setgid(65534)
                    os.setuid(65534)
                try:
                    load(folder)
                    message = "loaded"
                except LoadError as error:
                    message = str(error)
                os.write(write_end, message.encode())
                os._exit(0)
            except BaseException:
                os._exit(2)
        os.close(write_end)
        with os.fdopen(read_end, "rb") as reader:
            message = reader.read().decode()
        _, status = os.waitpid(pid, 0)
    finally:
        os.chmod(folder, 0o755)
        shutil.rmtree(base)
    assert os.waitstatus_to_exitcode(status) == 0
    assert message == f"HANDLER_FOLDER {folder!r} cannot be read: Permission denied"


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


def test_a_null_byte_in_the_source_is_a_syntax_error_without_a_line(tmp_path):
    (tmp_path / "handler.py").write_bytes(b"def main(req, res):\n    return 1\x00\n")
    with pytest.raises(LoadError) as caught:
        load(str(tmp_path))
    assert str(caught.value).startswith(f"syntax error in {tmp_path / 'handler.py'}: ")
    assert "None" not in str(caught.value)


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


# -- finding the function's files at start-up (Config.from_env does no I/O) -----------


@pytest.fixture
def roots(tmp_path, monkeypatch):
    """Stand-ins for '/' and '/kubeless' (and the image's '/function', absent), so the test never writes to the real root."""
    root, kubeless = tmp_path / "root", tmp_path / "kubeless"
    root.mkdir()
    kubeless.mkdir()
    monkeypatch.setattr("funcwsgi.handler.loader.DEFAULT_FOLDERS", (str(root), str(kubeless), str(tmp_path / "function")))
    return root, kubeless


def test_sources_in_root_win(roots):
    root, kubeless = roots
    (root / "handler.py").write_text("")
    (kubeless / "handler.py").write_text("")
    assert find_sources(Config.from_env({})).handler_folder == str(root)


def test_sources_only_in_kubeless_are_found(roots):
    _, kubeless = roots
    (kubeless / "orders.py").write_text("")
    config = find_sources(Config.from_env({"MOD_NAME": "orders", "FUNC_HANDLER": "create"}))
    assert config.handler_path == f"{kubeless}/orders.py"


def test_no_sources_name_the_last_default_folder_that_exists(roots, tmp_path):
    root, kubeless = roots
    # The loading error then names the most specific place to put the function.
    assert find_sources(Config.from_env({})).handler_path == str(kubeless / "handler.py")
    kubeless.rmdir()
    assert find_sources(Config.from_env({})).handler_path == str(root / "handler.py")
    (tmp_path / "function").mkdir()  # the runtime image's folder, empty
    assert find_sources(Config.from_env({})).handler_path == str(tmp_path / "function" / "handler.py")


def test_the_runtime_image_folder_is_looked_in_last(roots, tmp_path):
    root, kubeless = roots
    (tmp_path / "function").mkdir()
    (tmp_path / "function" / "handler.py").write_text("")
    assert find_sources(Config.from_env({})).handler_folder == str(tmp_path / "function")
    (kubeless / "handler.py").write_text("")
    assert find_sources(Config.from_env({})).handler_folder == str(kubeless)


def test_injected_kyma_names_choose_the_folder_when_no_image_default_is_set():
    # What Kyma's controller injects into a Python runtime image's pod.
    injected = {"FUNCTION_PATH": "/kubeless", "MOD_NAME": "handler", "FUNC_HANDLER": "main"}
    assert find_sources(Config.from_env(injected)).handler_path == "/kubeless/handler.py"
    assert find_sources(Config.from_env({"HANDLER_PATH": "/srv/fn", **injected})).handler_folder == "/srv/fn"


def test_an_explicit_folder_is_never_second_guessed(roots, tmp_path):
    _, kubeless = roots
    (kubeless / "handler.py").write_text("")
    assert find_sources(Config.from_env({"HANDLER_FOLDER": str(tmp_path)})).handler_folder == str(tmp_path)


def test_main_py_is_the_module_when_there_is_no_handler_py(tmp_path):
    (tmp_path / "main.py").write_text("")
    assert find_sources(Config.from_env({"HANDLER_FOLDER": str(tmp_path)})).handler_module_name == "main"
    (tmp_path / "handler.py").write_text("")
    assert find_sources(Config.from_env({"HANDLER_FOLDER": str(tmp_path)})).handler_module_name == "handler"
    assert find_sources(Config.from_env({"HANDLER_FOLDER": str(tmp_path), "HANDLER_MODULE_NAME": "main"})).handler_module_name == "main"


def test_a_found_module_keeps_the_function_name_given_with_it(tmp_path):
    (tmp_path / "main.py").write_text("")
    config = find_sources(Config.from_env({"HANDLER_FOLDER": str(tmp_path), "HANDLER_FUNCTION_NAME": "hello"}))
    assert (config.handler_module_name, config.handler_function_name) == ("main", "hello")



def test_a_loaded_function_is_a_frozen_record_built_without_generated_code():
    """As a frozen dataclass was, without one: its methods are the module's own, not compiled at start (issue 44)."""
    def main(req):
        return "hi"

    loaded = LoadedFunction(function=main, signature=Signature.REQ, name="main")
    assert (loaded.path, loaded.module, loaded.hooks, loaded.imports, loaded.folder) == ("<callable>", None, {}, frozenset(), ".")
    assert LoadedFunction(main, Signature.REQ, "main").hooks is not loaded.hooks  # a dict per record
    for name in ("__init__", "__eq__", "__repr__", "__setattr__", "__delattr__"):
        assert getattr(LoadedFunction, name).__code__.co_filename.endswith("loader.py"), name
    with pytest.raises(dataclasses.FrozenInstanceError):
        loaded.name = "other"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del loaded.name  # type: ignore[misc]
    assert loaded == LoadedFunction(function=main, signature=Signature.REQ, name="main")
    assert loaded != LoadedFunction(function=main, signature=Signature.REQ, name="main", folder="/f") and loaded != "main"
    renamed = loaded.replace(name="handle", hooks={"start": print})
    assert (renamed.name, renamed.hooks, renamed.function, loaded.name) == ("handle", {"start": print}, main, "main")
    with pytest.raises(TypeError, match="nmae"):
        loaded.replace(nmae="x")
    assert repr(loaded).startswith("LoadedFunction(function=<function ") and "name='main'" in repr(loaded)
    with pytest.raises(TypeError):
        hash(loaded)
