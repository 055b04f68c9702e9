"""adapters/gunicorn/http1.py, in-process: what a connection leaves behind once closed.

The edge runs here on the worker's own loop (uvloop), in this process, with a
real listening socket and real clients, so that what a closed connection
still holds can be looked at. What the edge answers is checked on real
gunicorn processes (test_worker.py, tests/reliability, the conformance kit).
"""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from gunicorn.config import Config as GunicornConfig

from funcwsgi import make_app
from funcwsgi.adapters.gunicorn.edge import Edge
from funcwsgi.adapters.gunicorn.http1 import Http1Connection
from funcwsgi.adapters.gunicorn.worker import new_event_loop

from ...support.polling import wait_for

#: Room for the loop to finish closing what the client closed: turns of the loop, not seconds.
TURNS = 1000


def plain(req: Any) -> str:
    return "hello"


async def on_loop(req: Any) -> str:
    await asyncio.sleep(0)
    return "hello"


@pytest.fixture
def no_cyclic_gc() -> Iterator[None]:
    """Only reference counting frees objects while the test runs."""
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


async def closed_connections(function: Callable[..., Any], requests: list[bytes]) -> list[weakref.ref[Http1Connection]]:
    """Serve ``requests``, each on a connection of its own, until the edge has closed them all; weak references to them."""
    loop = asyncio.get_running_loop()
    edge = Edge(make_app(function, environ={"SERVER_LOOP_BLOCKED_SECONDS": "0"}), GunicornConfig(), loop)
    made: list[weakref.ref[Http1Connection]] = []

    def connection() -> Http1Connection:
        conn = Http1Connection(edge)
        made.append(weakref.ref(conn))
        return conn

    server = await loop.create_server(connection, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        for request in requests:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(request)
            answer = await reader.read()
            assert answer.startswith(b"HTTP/1.1 "), answer
            writer.close()
        for _ in range(TURNS):
            if not edge.open:
                break
            await asyncio.sleep(0)
        assert not edge.open, "the edge did not close its connections"
    finally:
        server.close()
        edge.runner.shutdown()
    return made


@pytest.mark.parametrize("function", [plain, on_loop], ids=["plain", "async"])
def test_a_closed_connection_is_freed_without_the_cyclic_gc(no_cyclic_gc: None, function: Callable[..., Any]) -> None:
    # A connection in a reference cycle (llhttp's callbacks and the transport both hold it) waits for the
    # cyclic GC: under a flood of short connections thousands pile up, and one collection pauses the loop.
    requests = [
        b"GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",  # answered, then closed by the edge
        b"GET / HTTP/1.0\r\nHost: t\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: t, u\r\n\r\n",  # refused: 400 and closed
        b"POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\nConnection: close\r\n\r\nab",
    ]
    loop = new_event_loop()
    try:
        made = loop.run_until_complete(closed_connections(function, requests))
    finally:
        loop.close()
    assert len(made) == len(requests)
    # A plain call's thread drops its job (and with it the connection) right after handing the answer to the
    # loop; on a busy machine that can come after the client has its answer, so it is waited for. A connection
    # in a cycle would never go: the cyclic GC is off.
    wait_for(lambda: all(ref() is None for ref in made), 5, "every closed connection freed", show=lambda: repr([ref() for ref in made]))


def addresses(req: Any) -> str:
    environ = req.environ
    return " ".join(environ[key] for key in ("SERVER_NAME", "SERVER_PORT", "REMOTE_ADDR", "REMOTE_PORT"))


def test_a_connections_calls_take_its_address_made_once_when_it_opened() -> None:
    """The environ's address entries come from the connection (calls.address_fields, made in connection_made),
    the same for each of its calls: not rebuilt from the peer and socket names for every call."""

    async def two_calls() -> tuple[list[bytes], Http1Connection, tuple[str, int], tuple[str, int]]:
        loop = asyncio.get_running_loop()
        edge = Edge(make_app(addresses, environ={"SERVER_LOOP_BLOCKED_SECONDS": "0"}), GunicornConfig(), loop)
        made: list[Http1Connection] = []

        def connection() -> Http1Connection:
            made.append(Http1Connection(edge))
            return made[-1]

        server = await loop.create_server(connection, "127.0.0.1", 0)
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", server.sockets[0].getsockname()[1])
            bodies = []
            for _ in range(2):
                writer.write(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n")
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:"))
                bodies.append(await reader.readexactly(length))
            names = writer.get_extra_info("sockname"), writer.get_extra_info("peername")
            writer.close()
            return bodies, made[0], names[0], names[1]
        finally:
            server.close()
            edge.runner.shutdown()

    loop = new_event_loop()
    try:
        bodies, conn, client, listening = loop.run_until_complete(two_calls())
    finally:
        loop.close()
    expected = {"SERVER_NAME": "127.0.0.1", "SERVER_PORT": str(listening[1]), "REMOTE_ADDR": "127.0.0.1", "REMOTE_PORT": str(client[1])}
    assert conn.address == expected
    assert bodies == [" ".join(expected.values()).encode()] * 2
