"""funcwsgi's gunicorn worker: one asyncio loop per process that is the HTTP edge for every function.

``HttpEdgeWorker`` subclasses only gunicorn's public ``Worker`` base (as
uvicorn's gunicorn worker does): gunicorn's arbiter, settings, hooks,
``max_requests``, heartbeat and graceful timeout keep their meaning, and
nothing of a concrete gunicorn worker or of gunicorn's parser is used. Its
loop (uvloop where it is installed) accepts on gunicorn's listening sockets
and reads each request with llhttp (:mod:`.http1`, :mod:`.bounds`); a
complete request goes to the :class:`~.calls.CallRunner`, which runs a plain
function on one of ``SERVER_NUMTHREADS`` threads and an ``async def`` one as
a task on the loop. :mod:`.connections` keeps the slow-client deadlines and
the room at ``SERVER_MAX_CONNECTIONS``.

On SIGTERM (or once ``max_requests`` calls were served, or a function
called ``sys.exit()``) the worker stops accepting, leaving new connections
to the other workers, closes the connections that wait on their client,
lets the calls in flight answer within ``graceful_timeout`` and returns, so
gunicorn runs ``worker_exit``. TLS is refused at start: it ends at the mesh
or the ingress.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import Callable
from functools import partial
from typing import Any

from gunicorn.workers.base import Worker

from funcwsgi.application import FunctionService

from . import WORKER_BOOT_ERROR
from .connections import SWEEP_SECONDS
from .edge import Edge
from .http1 import Http1Connection
from .http2_on_demand import install as install_http2


class HttpEdgeWorker(Worker):  # type: ignore[misc]  # gunicorn is untyped: its classes are Any
    """A gunicorn worker whose event loop is the HTTP edge; see the module's documentation."""

    alive: bool
    wsgi: Any
    #: True once the loop stopped in order (max requests, a reload, SIGTERM), not by a function's sys.exit().
    stopped_in_order = False
    #: Wakes the serving loop at once; set while the loop runs.
    wake_loop: Callable[[], object] | None = None

    def init_process(self) -> None:
        if self.cfg.is_ssl:
            # TLS ends in front of the function (the mesh, the ingress): one line, and the server stops.
            print("funcwsgi: error: gunicorn's certfile/keyfile are not supported: terminate TLS in front of the function", file=sys.stderr)
            sys.exit(WORKER_BOOT_ERROR)
        super().init_process()

    def load_wsgi(self) -> None:
        super().load_wsgi()
        loaded = self.wsgi
        service = loaded if isinstance(loaded, FunctionService) else getattr(loaded, "service", None)
        if not isinstance(service, FunctionService):
            print(f"funcwsgi: error: the worker serves funcwsgi's application only, not {loaded!r}", file=sys.stderr)
            sys.exit(WORKER_BOOT_ERROR)
        self.service = service

    def handle_exit(self, sig: int, frame: object) -> None:
        super().handle_exit(sig, frame)
        # uvloop takes the signal wake-up fd while it runs, so gunicorn's pipe stays silent:
        # without this the loop saw `alive` go false only at its next sweep, up to 0.25 s later.
        if self.wake_loop is not None:
            self.wake_loop()

    def run(self) -> None:
        loop = new_event_loop()
        asyncio.set_event_loop(loop)
        try:
            status = loop.run_until_complete(self.serve(loop))
        finally:
            self.wake_loop = None  # a closed loop takes no callback: a later signal only clears `alive`
            loop.close()
        if status is not None:
            sys.exit(status)
        # Read by the worker_exit hook: the master then knows this exit for no crash (funcwsgi.adapters.gunicorn.BootReports).
        self.stopped_in_order = True

    async def serve(self, loop: asyncio.AbstractEventLoop) -> int | None:
        edge = Edge(self.service, self.cfg, loop)
        install_http2(edge, self.cfg)
        runner = edge.runner
        woken = asyncio.Event()
        servers: list[asyncio.AbstractServer] = []

        def stop_accepting() -> None:
            # At once, on the loop: a connection that comes after a function's sys.exit() or the
            # max_requests-th call waits in the listening socket's queue for another worker.
            for server in servers:
                server.close()
            woken.set()

        def signalled() -> None:
            # gunicorn's signal handlers write to this pipe: the loop looks at `alive` at once.
            try:
                while os.read(self.PIPE[0], 4096):
                    pass
            except OSError:
                pass
            woken.set()

        runner.on_exit = stop_accepting
        self.wake_loop = partial(loop.call_soon_threadsafe, woken.set)
        runner.max_calls = self.max_requests
        loop.add_reader(self.PIPE[0], signalled)
        # Told to stop while it booted (boot_signals): it never listens, so no connection is taken only to be closed.
        for listener in self.sockets if self.alive else ():
            # partial(), not a lambda: a new connection's protocol made without a Python frame of ours.
            servers.append(await loop.create_server(partial(Http1Connection, edge), sock=listener.sock, backlog=self.cfg.backlog))
        recycled = False
        while self.alive and runner.exit_status is None:
            self.notify()
            edge.connections.sweep()
            if self.ppid != os.getppid():
                self.log.info("Parent changed, shutting down: %s", self)
                break
            if runner.calls >= self.max_requests:
                self.log.info("Autorestarting worker after current request.")
                recycled = True
                break
            woken.clear()
            try:
                await asyncio.wait_for(woken.wait(), SWEEP_SECONDS)
            except TimeoutError:
                pass
        self.alive = False
        stop_accepting()
        await self.drain(edge, RECYCLING_LINGER if recycled else 0.0)
        loop.remove_reader(self.PIPE[0])
        runner.shutdown()
        return runner.exit_status

    async def drain(self, edge: Edge, linger: float = 0.0) -> None:
        """Close what waits on its client; let the calls (and requests already arriving) answer within graceful_timeout.

        With ``linger`` (a worker replaced after ``max_requests``, the server itself staying up), an idle
        keep-alive connection stays open that long first: a client that sends on it meanwhile is answered,
        with ``Connection: close``, rather than finding it closed under its request.
        """
        for conn in list(edge.open):
            conn.stop(close_idle=not linger)
        now = time.monotonic()
        deadline = now + self.cfg.graceful_timeout
        lingered = now + min(linger, self.cfg.graceful_timeout)
        while edge.open and time.monotonic() < deadline:
            if linger and time.monotonic() >= lingered:
                linger = 0.0
                for conn in list(edge.open):
                    conn.stop()
            self.notify()
            edge.connections.sweep()
            await asyncio.sleep(0.05)
        for conn in list(edge.open):
            if conn.transport is not None:
                conn.transport.abort()
        await asyncio.sleep(0)


#: Seconds a worker replaced after ``max_requests`` keeps its idle keep-alive connections open (drain()).
#: Clients that reuse a connection often (a proxy under load) send on it within this and get their answer;
#: one that stays idle longer is closed, as on SIGTERM.
RECYCLING_LINGER = 1.0


def new_event_loop() -> asyncio.AbstractEventLoop:
    """uvloop's loop where it is installed, else asyncio's."""
    try:
        import uvloop
    except ImportError:
        return asyncio.new_event_loop()
    loop: asyncio.AbstractEventLoop = uvloop.new_event_loop()
    return loop
