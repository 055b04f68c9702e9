"""h2c on the edge worker, its HTTP/2 side (:mod:`.http2` and the h2 library) imported when a client first speaks it.

HTTP/2 is on by default under gunicorn, yet most functions are only ever
called over HTTP/1.1; h2, hpack and hyperframe cost every start some 55
million instructions, a seventh of bare gunicorn's own start-up
(docs/performance.md, issue 44). The worker installs this stand-in instead,
and the first connection opening with the preface, or the first request
asking ``Upgrade: h2c``, imports them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .edge import Edge
    from .http1 import Http1Connection, Http1Exchange
    from .http2 import Http2Entry


class Http2OnDemand:
    """Stands for the worker's :class:`~.http2.Http2Entry` and makes it on first use."""

    def __init__(self, edge: Edge, cfg: Any) -> None:
        self.edge = edge
        self.cfg = cfg
        self.made: Http2Entry | None = None

    def entry(self) -> Http2Entry:
        if self.made is None:
            from .http2 import Http2Entry

            self.made = Http2Entry(self.edge, self.cfg, int(getattr(self.cfg, "http2_max_concurrent_streams", 100)))
        return self.made

    def prior_knowledge(self, conn: Http1Connection, opening: bytes) -> None:
        self.entry().prior_knowledge(conn, opening)

    def wanted(self, conn: Http1Connection, exchange: Http1Exchange) -> bytes | None:
        return self.entry().wanted(conn, exchange)

    def upgrade(self, conn: Http1Connection, exchange: Http1Exchange, settings: bytes, rest: bytes) -> None:
        self.entry().upgrade(conn, exchange, settings, rest)


def install(edge: Edge, cfg: Any) -> None:
    """Serve h2c on ``edge`` where gunicorn's settings ask for it: ``http_protocols``, ``http2_cleartext``,
    ``http2_max_concurrent_streams`` (``SERVER_HTTP2`` and ``SERVER_HTTP2_MAX_STREAMS`` set them)."""
    if "h2" not in getattr(cfg, "http_protocols", ()):
        return
    cleartext = getattr(cfg, "http2_cleartext", "both")
    on_demand = Http2OnDemand(edge, cfg)
    if cleartext in ("prior-knowledge", "both"):
        edge.http2 = on_demand.prior_knowledge
        edge.http2_prior_knowledge = True
    if cleartext in ("upgrade", "both"):
        edge.http2_upgrade = on_demand
