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
        # waitress's one inactivity timeout, looked at every cleanup_interval seconds: the head timeout
        # here; an idle kept-alive channel waits SERVER_KEEPALIVE_TIMEOUT instead (Channel).
        "channel_timeout": channel_timeout(config),
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
    channel = type("Channel", (Channel,), {"keepalive_grace": max(0.0, config.server_keepalive_timeout - channel_timeout(config))})
    for listener in listeners:
        listener.channel_class = channel
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


def channel_timeout(config: Config) -> int:
    """waitress's inactivity timeout (whole seconds): a connection without a complete request is closed after it."""
    return max(1, round(config.server_header_timeout))


class HeadTask(WSGITask):
    """waitress's task, without the chunked terminator after a HEAD answer; its channel learns it has answered."""

    def finish(self) -> None:
        if getattr(self.request, "command", None) == "HEAD":  # typed as parser or error; a WSGITask has a parser
            if not self.wrote_header:
                self.write(b"")
            self.chunked_response = False
        super().finish()
        if isinstance(self.channel, Channel):
            self.channel.answered = True


class Channel(HTTPChannel):
    """waitress's channel, kept open while idle between calls as long as ``SERVER_KEEPALIVE_TIMEOUT``.

    waitress closes a channel with no request in progress once its ``last_activity`` is
    ``channel_timeout`` old, the head timeout here: a connection that sends nothing, or
    trickles a head, is closed then. A channel that has answered and has no next request
    begun (``request`` is None) reads as active ``keepalive_grace`` seconds longer, so it is
    closed at ``SERVER_KEEPALIVE_TIMEOUT``: later than the proxies in front close their idle
    pooled connections (docs/deployment.md#idle-connections-behind-the-platforms-proxy).
    """

    task_class = HeadTask
    keepalive_grace = 0.0  # SERVER_KEEPALIVE_TIMEOUT past channel_timeout, set by serve()
    answered = False
    seen = 0.0

    @property
    def last_activity(self) -> float:
        if self.answered and self.request is None:
            return self.seen + self.keepalive_grace
        return self.seen

    @last_activity.setter
    def last_activity(self, when: float) -> None:
        self.seen = when


def _drained(socket_map: dict[int, Any]) -> bool:
    return not any(
        channel.requests or channel.total_outbufs_len for channel in socket_map.values() if isinstance(channel, HTTPChannel)
    )
