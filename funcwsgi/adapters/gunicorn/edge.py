"""What one worker's connections share, whatever protocol they speak: the bounds, the deadlines, the call runner."""

from __future__ import annotations

import asyncio
from typing import Any

from funcwsgi.application import FunctionService

from .bounds import HeadBounds, Limits
from .calls import OUTBOX_LIMIT, CallRunner
from .connections import Connections, Timeouts
from .dates import DATE


class Edge:
    """What one worker's connections share: the bounds, the deadlines, the call runner."""

    def __init__(self, service: FunctionService, cfg: Any, loop: asyncio.AbstractEventLoop) -> None:
        config = service.config
        self.limits = Limits(
            request_line=cfg.limit_request_line,
            fields=cfg.limit_request_fields,
            field_size=cfg.limit_request_field_size,
            body=config.server_max_body_size,
        )
        self.head_bounds = HeadBounds(self.limits)
        #: The 413 for a chunk whose size alone is past the body limit (the body-limit layer's words).
        self.body_too_large = self.limits.body_too_large
        self.timeouts = Timeouts(
            header=config.server_header_timeout,
            body=config.server_body_timeout,
            keepalive=config.server_keepalive_timeout,
            send=config.server_send_timeout,
        )
        self.connections = Connections(config.server_max_connections, self.timeouts)
        self.runner = CallRunner(service, cfg.threads, loop, config.server_send_timeout)
        if service.on_loop:
            from .loop_calls import LoopCalls  # imports greenlet: only for async functions

            self.runner.loop_calls = LoopCalls(self.runner)
        self.outbox_limit = OUTBOX_LIMIT
        #: Serves a connection that opened with HTTP/2's preface: (connection, bytes read); None: HTTP/1.1 only.
        self.http2: Any = None
        self.http2_prior_knowledge = False
        #: Upgrades an HTTP/1.1 request asking ``Upgrade: h2c`` (http2.Http2Entry); None: such a request is served as HTTP/1.1.
        #: These three are set by http2_on_demand.install, where gunicorn's settings ask for h2c.
        self.http2_upgrade: Any = None
        #: The open connections (whatever their protocol), to stop them when the worker stops.
        self.open: dict[Any, None] = {}
        DATE.keep(loop)

    def opened(self, conn: Any) -> None:
        self.open[conn] = None

    def closed(self, conn: Any) -> None:
        self.open.pop(conn, None)
