"""``funcwsgi serve``: serve the function the environment names on the server ``SERVER_ADAPTER`` names."""

from __future__ import annotations

import argparse

from ..config import Config

NAME = "serve"
HELP = "Serve the function configured by the environment (what `python -m funcwsgi` does)."
EPILOG = """The server is chosen by SERVER_ADAPTER (gunicorn, waitress, werkzeug, granian, kafka);
every setting comes from the environment: see `funcwsgi settings` and docs/servers.md.

examples:
  HANDLER_FOLDER=. funcwsgi serve
  HANDLER_FOLDER=. SERVER_ADAPTER=waitress SERVER_PORT=9000 funcwsgi serve
  HANDLER_FOLDER=. SERVER_ADAPTER=werkzeug SERVER_RELOAD=true funcwsgi serve
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    pass


def run(args: argparse.Namespace) -> int:
    from adapters import load_adapter

    config = Config.from_env()
    return load_adapter(config.server_adapter).serve(config)
