"""waitress: one process, ``SERVER_NUMTHREADS`` threads, pure Python (``funcwsgi[waitress]``).

waitress has no graceful stop of its own, so this adapter runs waitress's
event loop one step at a time: after SIGTERM it closes the listening
sockets, keeps the loop going until every connection has no request in
progress and no unsent output (or ``SERVER_GRACEFUL_TIMEOUT`` passed), then
stops the task threads.

A HEAD answer of unknown length carries waitress's ``Transfer-Encoding:
chunked`` (the header a GET would get) but not the chunked terminator that
waitress writes after it: a HEAD response ends at its header section
(RFC 9112 section 6.3), so those bytes would be read as the next response.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from waitress import wasyncore
from waitress.channel import HTTPChannel
from waitress.server import BaseWSGIServer, create_server
from waitress.task import WSGITask

from funcwsgi.adapters import host_port, warn_about_hostile_gaps
from funcwsgi.adapters._signals import StopRequest
from funcwsgi.application import default_app
from funcwsgi.process import start_process, stop_process

if TYPE_CHECKING:
    from funcwsgi.config import Config

WAITRESS_BODY_SLACK = 1024 * 1024
# How often the drain looks at the connections when nothing wakes the loop.
DRAIN_TICK = 0.05


def serve(config: Config) -> int:
    service = default_app(config)
    warn_about_hostile_gaps("waitress")
    start_process(service)
    options: dict[str, Any] = {
        "listen": host_port(config.server_host, config.server_port),
        "threads": config.server_numthreads,
        "ident": "funcwsgi",
        # waitress reads whole requests on its loop and stops accepting at this many connections.
        "connection_limit": config.server_max_connections,
        # One inactivity timeout for everything, looked at every cleanup_interval seconds.
        "channel_timeout": max(1, round(config.server_keepalive_timeout)),
        "cleanup_interval": max(1, round(min(config.server_header_timeout, config.server_keepalive_timeout))),
    }
    if config.server_max_body_size:
        # waitress buffers a whole body before the app runs, so its own guard stops huge ones
        # early; it counts chunked framing too, so it is set well above the limit that
        # funcwsgi's body-limit layer then enforces exactly.
        options["max_request_body_size"] = 2 * config.server_max_body_size + WAITRESS_BODY_SLACK
    # The socket map is ours, handed to waitress (its documented ``map`` argument), so the loop below can run it.
    socket_map: dict[int, Any] = {}
    create_server(service, map=socket_map, **options)
    listeners = [d for d in socket_map.values() if isinstance(d, BaseWSGIServer)]
    for listener in listeners:
        listener.channel_class = Channel
    stop = StopRequest(on_stop=lambda: listeners[0].pull_trigger())
    stop.install(config.server_graceful_timeout)
    try:
        while not stop.is_set():
            wasyncore.loop(timeout=1.0, map=socket_map, use_poll=True, count=1)
        for listener in listeners:
            wasyncore.dispatcher.close(listener)  # the socket only: the trigger must keep waking the loop
        while stop.left() > 0 and not _drained(socket_map):
            wasyncore.loop(timeout=min(DRAIN_TICK, stop.left()), map=socket_map, use_poll=True, count=1)
    finally:
        listeners[0].task_dispatcher.shutdown(cancel_pending=True, timeout=1)
        wasyncore.close_all(socket_map)
        stop_process(service)
    return 0


class HeadTask(WSGITask):
    """waitress's task, without the chunked terminator after a HEAD answer."""

    def finish(self) -> None:
        if getattr(self.request, "command", None) == "HEAD":  # typed as parser or error; a WSGITask has a parser
            if not self.wrote_header:
                self.write(b"")
            self.chunked_response = False
        super().finish()


class Channel(HTTPChannel):
    task_class = HeadTask


def _drained(socket_map: dict[int, Any]) -> bool:
    return not any(
        channel.requests or channel.total_outbufs_len for channel in socket_map.values() if isinstance(channel, HTTPChannel)
    )
