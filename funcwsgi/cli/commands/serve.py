"""``funcwsgi serve``: serve the function the environment names on the server ``SERVER_ADAPTER`` names."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ... import process
from ...errors import StartupError

if TYPE_CHECKING:
    import argparse
    from types import SimpleNamespace

    from ...config import Config

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


def run(args: argparse.Namespace | SimpleNamespace) -> int:
    # Before the request path and the server are imported: each process gives the
    # collector back once started (funcwsgi.process.hold_collector).
    process.hold_collector()
    from funcwsgi.adapters import load_adapter
    from funcwsgi.config import Config

    config = Config.from_env()
    adapter = load_adapter(config.server_adapter)
    if not config.server_reload:  # with the reloader the serving process inherits a bound socket
        check_address(config)
    return adapter.serve(config)


def check_address(config: Config) -> None:
    """Refuse an address nothing can listen on, as one line, before any server prints its own traceback."""
    import socket

    family = socket.AF_INET6 if ":" in config.server_host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the servers do
        try:
            probe.bind((config.server_host, config.server_port))
        except OSError as error:
            raise StartupError(
                f"cannot listen on {config.env_name('server_host')}={config.server_host!r} "
                f"{config.env_name('server_port')}={config.server_port}: {error.strerror}"
            ) from None
