"""``funcwsgi settings``: the runtime's settings and their values."""

from __future__ import annotations

import argparse

from ...config import Config
from ..settings_doc import effective_settings, settings_table

NAME = "settings"
HELP = "Show every setting the runtime reads, or the values it would use now."
EPILOG = """examples:
  funcwsgi settings                 # NAME=value for the current environment
  funcwsgi settings --markdown      # the settings table of docs/configuration.md
  SERVER_PORT=abc funcwsgi settings # exits 2: SERVER_PORT='abc' is invalid ...
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--markdown", action="store_true", help="print the table of all settings as Markdown")


def run(args: argparse.Namespace) -> int:
    if args.markdown:
        print(settings_table(), end="")
        return 0
    print(effective_settings(Config.from_env()), end="")
    return 0
