"""The HTTP side of the kafka adapter: probes and metrics on SERVER_PORT, nothing else."""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING

from werkzeug.serving import BaseWSGIServer, WSGIRequestHandler, make_server

from ..middleware.reserved import LIVENESS_PATHS, READINESS_PATH, ROUTED_METHODS
from ..replies import Reply, probe_reply
from .consumer import TriggerStatus

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

NOT_CONNECTED = probe_reply(503, "Kafka brokers unreachable")
NOT_RUNNING = probe_reply(503, "Kafka consumer stopped")
NOT_FOUND = Reply(404, "Not Found: this function is served from Kafka, not over HTTP")



class ProbeApp:
    """The probes and ``/metrics``; the function itself is not reachable over HTTP.

    The consumer's state comes first (readiness: a broker connection is up;
    liveness: the consumer loop runs); then the application's own reserved
    routes answer, with the function's ``ready()``/``alive()`` hooks and the
    call metrics, exactly as on the HTTP servers.
    """

    def __init__(self, app: WSGIApplication, status: TriggerStatus, metrics_path: str | None) -> None:
        """``metrics_path``: where the application answers metrics on this port; None when it does not."""
        self.app = app
        self.status = status
        # Only paths the application answers itself: anything else would reach the function.
        self.forwarded = frozenset({READINESS_PATH, *LIVENESS_PATHS} | ({metrics_path} if metrics_path else set()))

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "")
        if environ.get("REQUEST_METHOD") not in ROUTED_METHODS or path not in self.forwarded:
            return NOT_FOUND(environ, start_response)
        if path in LIVENESS_PATHS and not self.status.running:
            return NOT_RUNNING(environ, start_response)
        if path == READINESS_PATH and not (self.status.running and self.status.connected):
            return NOT_CONNECTED(environ, start_response)
        return self.app(environ, start_response)


class QuietHandler(WSGIRequestHandler):
    """No log line per probe: the platform calls them every few seconds."""

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        pass


def start_probe_server(app: WSGIApplication, host: str, port: int) -> BaseWSGIServer:
    server = make_server(host, port, app, threaded=True, request_handler=QuietHandler)
    threading.Thread(target=server.serve_forever, name="kafka-probes", daemon=True).start()
    return server
