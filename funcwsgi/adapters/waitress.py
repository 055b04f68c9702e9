"""waitress: one process, ``SERVER_NUMTHREADS`` threads, pure Python (``funcwsgi[waitress]``).

waitress has no graceful stop of its own, so this adapter runs waitress's
event loop one step at a time: after SIGTERM it closes the listening
sockets, keeps the loop going until every connection has no request in
progress and no unsent output (or ``SERVER_GRACEFUL_TIMEOUT`` passed), then
stops the task threads. The function's ``stop()`` then gets the rest of that
timeout (at least :data:`STOP_FLOOR` seconds) and is left behind if it has not
returned; the process ends at that point even if threads the function started
would keep the interpreter's exit waiting. A SIGTERM while ``start()`` runs is
kept: once ``start()`` returns, ``stop()`` runs and nothing is served; a
``start()`` still running ``SERVER_GRACEFUL_TIMEOUT`` after the signal is left
behind, and the process exits 0.

A HEAD answer of unknown length carries waitress's ``Transfer-Encoding:
chunked`` (the header a GET would get) but not the chunked terminator that
waitress writes after it: a HEAD response ends at its header section
(RFC 9112 section 6.3), so those bytes would be read as the next response.
"""

from __future__ import annotations

import atexit
import logging
import os
import sys
import threading
import time
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
# stop() gets what is left of SERVER_GRACEFUL_TIMEOUT, but never less than this: after a drain
# that used the whole timeout, a stop() that closes a pool still runs.
STOP_FLOOR = 1.0

log = logging.getLogger("funcwsgi")


def serve(config: Config) -> int:
    service = default_app(config)
    warn_about_hostile_gaps("waitress")
    listeners: list[BaseWSGIServer] = []
    # Taken before start() runs: a SIGTERM during start() is kept (and bounded), not the default death.
    stop = StopRequest(on_stop=lambda: _woken(listeners))
    stop.install(config.server_graceful_timeout)
    started = threading.Event()
    threading.Thread(target=_watch_start, args=(stop, started, config.server_graceful_timeout), name="funcwsgi-start-watch", daemon=True).start()
    try:
        start_process(service)
    finally:
        started.set()
    if stop.is_set():
        log.info("SIGTERM came while start() ran: not serving")
        _stop_within(service, stop)
        return 0
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
    listeners.extend(d for d in socket_map.values() if isinstance(d, BaseWSGIServer))
    channel = type("Channel", (Channel,), {"keepalive_grace": max(0.0, config.server_keepalive_timeout - channel_timeout(config))})
    for listener in listeners:
        listener.channel_class = channel
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
        _stop_within(service, stop)
    return 0


def _woken(listeners: list[BaseWSGIServer]) -> None:
    if listeners:  # none yet while start() runs
        listeners[0].pull_trigger()


def _watch_start(stop: StopRequest, started: threading.Event, graceful_timeout: float) -> None:
    """Leave (exit 0) if ``start()`` is still running ``SERVER_GRACEFUL_TIMEOUT`` after a stop signal."""
    while not started.is_set():
        if stop.event.wait(0.5):
            if not started.wait(stop.left()):
                log.warning("start() did not return within SERVER_GRACEFUL_TIMEOUT=%gs of the stop signal; exiting without stop()", graceful_timeout)
                _leave()
            return


def _stop_within(service: Any, stop: StopRequest) -> None:
    """The function's ``stop()`` within what is left of the graceful timeout; then the process ends.

    ``stop()`` runs on a thread of its own, left behind if it has not returned in
    time. Threads the function started and never ended would keep the
    interpreter's exit waiting, and before them its exit handlers (the last span
    export, the metrics folder's removal): those threads get the time left too,
    then the exit handlers run and the process leaves without joining them.
    """
    budget = max(stop.left(), STOP_FLOOR)
    ends = time.monotonic() + budget
    stopping = threading.Thread(target=stop_process, args=(service,), name="funcwsgi-stop", daemon=True)
    stopping.start()
    stopping.join(budget)
    if stopping.is_alive():
        log.warning("stop() in %s did not return within SERVER_GRACEFUL_TIMEOUT; exiting without waiting for it", service.loaded.path)
        _leave()
    for thread in threading.enumerate():
        if thread is not threading.current_thread() and not thread.daemon:
            thread.join(max(0.0, ends - time.monotonic()))
            if thread.is_alive():
                _leave()


def _leave() -> None:
    """Exit 0 now: the exit handlers run and the outputs are flushed, threads still running are not joined."""
    try:
        atexit._run_exitfuncs()
        logging.shutdown()
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(0)


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
