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
