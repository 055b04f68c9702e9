"""The metrics served on a port of their own (``SERVER_METRICS_PORT``), apart from the function."""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ..config import Config
from ..replies import Reply
from .endpoint import MetricsEndpoint

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIEnvironment


def serve_metrics_port(config: Config) -> threading.Thread:
    """Serve ``SERVER_METRICS_PATH`` on ``SERVER_METRICS_PORT`` from a thread of this (the server's main) process.

    Only the metrics are there: any other path is 404, so the port can be
    exposed to a scraper without exposing the function. Raises
    :class:`~funcwsgi.errors.StartupError` when the port cannot be listened on.
    """
    import signal
    import socket
    from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

    from ..errors import StartupError

    endpoint = MetricsEndpoint(config)
    path = config.server_metrics_path
    not_found = Reply(404, "Not Found")

    def metrics_only(environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        if environ.get("PATH_INFO") == path and environ.get("REQUEST_METHOD") in ("GET", "HEAD"):
            return endpoint(environ, start_response)
        return not_found(environ, start_response)

    class Quiet(WSGIRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
            pass

    class Server(WSGIServer):
        address_family = socket.AF_INET6 if ":" in config.server_host else socket.AF_INET

    try:
        server = make_server(config.server_host, config.server_metrics_port, metrics_only, server_class=Server, handler_class=Quiet)
    except OSError as error:
        raise StartupError(
            f"cannot listen on {config.env_name('server_host')}={config.server_host!r} "
            f"{config.env_name('server_metrics_port')}={config.server_metrics_port}: {error.strerror}"
        ) from None

    def serve() -> None:
        # Stop signals are for the server's main thread; never let the kernel hand one to this one.
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT})
        server.serve_forever()

    thread = threading.Thread(target=serve, name="funcwsgi-metrics-port", daemon=True)
    thread.start()
    return thread
