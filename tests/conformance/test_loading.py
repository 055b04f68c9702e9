"""C10: a function that cannot load stops start-up before serving: one line naming what is wrong, exit 2."""

from __future__ import annotations

import pytest

from .kit import main_line


def failed(launcher, fixture, **settings):
    exited = launcher.run_to_exit(fixture, settings)
    assert exited.returncode == 2, (exited.returncode, exited.stdout[-1000:], exited.stderr[-2000:])
    assert not any(line.startswith("Starting ") for line in exited.stdout.splitlines()), exited.stdout
    return main_line(exited.stderr)


def test_a_missing_module_file_names_the_folder_and_what_it_holds(launcher):
    line = failed(launcher, "missing_file")
    assert f"in {launcher.fixture('missing_file')}" in line and line.endswith("the folder holds: README.md"), line


def test_a_missing_folder_is_named(launcher, tmp_path):
    missing = tmp_path / "no-such-folder"
    line = failed(launcher, None, HANDLER_FOLDER=str(missing))
    assert f"HANDLER_FOLDER '{missing}' does not exist" in line, line


def test_a_missing_function_lists_what_the_module_has(launcher):
    line = failed(launcher, "missing_main")
    assert "'main'" in line and str(launcher.module_file("missing_main")) in line, line
    assert line.endswith("found: helper, mian"), line


def test_a_syntax_error_names_the_file_and_line(launcher):
    line = failed(launcher, "syntax_error")
    assert f"syntax error in {launcher.module_file('syntax_error')} line 4" in line, line


def test_a_module_that_throws_while_loading_names_the_file_and_the_error(launcher):
    exited = launcher.run_to_exit("import_fails", {})
    assert exited.returncode == 2
    line = main_line(exited.stderr)
    assert str(launcher.module_file("import_fails")) in line and "the function's module failed on purpose" in line, line
    # The user's own stack follows the line; the runtime's frames are left out.
    assert str(launcher.module_file("import_fails")) in exited.stderr.split(line, 1)[1], exited.stderr


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("SERVER_PORT", "abc", "an integer from 1 to 65535"),
        ("SERVER_CALL_TIMEOUT", "-1", "a non-negative number of seconds up to 1000000"),
        ("FUNC_TIMEOUT", "soon", "a non-negative number of seconds up to 1000000"),
        # Longer durations overflow what the servers' timers take (funcwsgi/config/parsers.py MAX_SECONDS).
        ("SERVER_KEEPALIVE_TIMEOUT", "1e10", "a positive number of seconds up to 1000000"),
        ("FUNC_BODY_MB_LIMIT", "lots", "a non-negative number of megabytes"),
        ("HANDLER_SIGNATURE", "bogus", "one of req-res, req, none, event-context"),
        ("SERVER_METRICS", "maybe", "true or false"),
    ],
)
def test_a_bad_value_is_one_line_naming_the_variable_the_value_and_what_is_expected(launcher, name, value, expected):
    if name == "HANDLER_SIGNATURE" and launcher.language.startswith("python"):
        expected += ", asgi"  # Python's ASGI functions (docs/async.md); Node has no such convention
    line = failed(launcher, "main", **{name: value})
    assert line.split(": error: ", 1)[1] == f"{name}='{value}' is invalid: expected {expected}", line
