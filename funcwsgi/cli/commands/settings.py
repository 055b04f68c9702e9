"""``funcwsgi settings``: the runtime's settings and their values."""

from __future__ import annotations

import argparse
import sys

from ...config import Config
from ...handler.loader import find_sources
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
    config = find_sources(Config.from_env())
    print(effective_settings(config, detected_signature(config)), end="")
    return 0


def detected_signature(config: Config) -> str | None:
    """The calling convention the runtime detects from the function, when it is not forced."""
    if config.handler_signature is not None:
        return None
    from ...errors import StartupError
    from ...handler.loader import load_function

    try:
        return load_function(config).signature.value
    except StartupError as error:
        print(f"funcwsgi: note: HANDLER_SIGNATURE is detected from the function, which did not load: {error}", file=sys.stderr)
        return None
