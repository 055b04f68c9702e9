from __future__ import annotations

import sys

import pytest

from funcwsgi import __version__
from funcwsgi.cli import main

from ..support.processes import base_env, run_to_exit


def test_version(capsys):
    with pytest.raises(SystemExit) as caught:
        main(["--version"])
    assert caught.value.code == 0
    assert capsys.readouterr().out.strip() == f"funcwsgi {__version__}"


def test_no_command_prints_help(capsys):
    assert main([]) == 0
    assert "COMMAND" in capsys.readouterr().out


def test_settings_prints_effective_values():
    result = run_to_exit([sys.executable, "-m", "funcwsgi", "settings"], base_env(SERVER_PORT="9001"))
    assert result.returncode == 0
    assert "SERVER_PORT=9001" in result.stdout.splitlines()


def test_bad_setting_is_one_line_and_exit_2():
    result = run_to_exit([sys.executable, "-m", "funcwsgi", "settings"], base_env(SERVER_PORT="abc"))
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == ["funcwsgi: error: SERVER_PORT='abc' is invalid: expected an integer from 1 to 65535"]


def test_serve_alone_runs_without_building_a_parser(monkeypatch, capsys):
    """A container's `funcwsgi serve` skips argparse (issue 44); its errors are the same one line."""
    import funcwsgi.cli

    def no_parser(only=None):
        raise AssertionError("a parser was built for `serve` alone")

    monkeypatch.setattr(funcwsgi.cli, "build_parser", no_parser)
    monkeypatch.setenv("SERVER_PORT", "abc")
    assert main(["serve"]) == 2
    assert capsys.readouterr().err.strip().splitlines() == ["funcwsgi: error: SERVER_PORT='abc' is invalid: expected an integer from 1 to 65535"]


def test_serve_takes_no_arguments_of_its_own(capsys):
    """What lets `serve` alone skip the parser: a new option would need its default there too."""
    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    assert capsys.readouterr().out.startswith("usage: funcwsgi serve [-h]\n")


def test_serve_with_more_than_its_name_is_parsed(capsys):
    with pytest.raises(SystemExit) as caught:
        main(["serve", "--port", "1"])
    assert caught.value.code == 2
    assert "unrecognized arguments: --port 1" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["create", "invoke"])
def test_an_unknown_option_shows_the_commands_own_usage(capsys, command: str):
    with pytest.raises(SystemExit) as caught:
        main([command, "--bogus"])
    assert caught.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"usage: funcwsgi {command} [-h]")
    assert err.endswith(f"funcwsgi {command}: error: unrecognized arguments: --bogus\n")


def test_arguments_after_dashes_are_refused_by_the_command(capsys):
    with pytest.raises(SystemExit) as caught:
        main(["create", "x", "--", "more"])
    assert caught.value.code == 2
    assert "funcwsgi create: error: 'funcwsgi create' takes no arguments after --" in capsys.readouterr().err
