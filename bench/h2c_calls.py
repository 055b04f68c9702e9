"""Instructions per h2c call of the edge worker in one process: raw HTTP/2 clients on loopback sockets, the hello function.

The h2c rows of the main benchmark (h2load against the worker) move with the
machine's load; this counts instructions, which do not. The edge is built
as the worker builds it (gunicorn's settings from funcwsgi's, the h2c
hand-over installed) on one uvloop loop, the function's calls on its
threads; ``connections`` clients in the same process open a connection each
with the preface and send ``GET /`` on a new stream as soon as the last one
ended, as ``h2load -m1`` does. The clients' own work (a few frames parsed in
Python) is counted too, the same before and after a change. ``--count``
runs it twice under callgrind (N and 3N calls) and divides the difference
by 2N, so start-up and the first calls cancel out.

    python -m bench.h2c_calls --count        # instructions per call, 16 connections
    python -m bench.h2c_calls --calls 3000   # one run, timed: CPU µs per call, clients included (noisy on a shared machine)
"""

from __future__ import annotations

import argparse
import asyncio
import os
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
#: The fields h2load sends for ``GET /`` (its user-agent included).
FIELDS = [(b":method", b"GET"), (b":path", b"/"), (b":scheme", b"http"), (b":authority", b"127.0.0.1:8080"), (b"user-agent", b"h2load nghttp2/1.52.0")]
DATA, HEADERS, RST_STREAM, SETTINGS, GOAWAY = 0x0, 0x1, 0x3, 0x4, 0x7
END_STREAM, ACK = 0x1, 0x1


def frame(kind: int, flags: int, stream: int, payload: bytes = b"") -> bytes:
    return struct.pack(">I", len(payload))[1:] + bytes((kind, flags)) + struct.pack(">I", stream) + payload


class Client(asyncio.Protocol):
    """One connection: a stream at a time, the next opened when the last one ended."""

    def __init__(self, left: list[int], done: asyncio.Future[int]) -> None:
        import hpack

        self.left = left
        self.done = done
        self.buffer = b""
        self.stream = 1
        self.answered = 0
        encoder = hpack.Encoder()
        self.first = encoder.encode(FIELDS)  # adds the fields to the server's table, as h2load's first request does
        self.repeated = encoder.encode(FIELDS)  # indexes alone
        self.transport: Any = None

    def connection_made(self, transport: Any) -> None:
        self.transport = transport
        # A window large enough that no WINDOW_UPDATE is needed: only the calls are counted.
        transport.write(PREFACE + frame(SETTINGS, 0, 0) + frame(0x8, 0, 0, struct.pack(">I", 2**30)))
        self.send()

    def send(self) -> None:
        if self.left[0] <= 0:
            self.transport.close()
            return
        self.left[0] -= 1
        block = self.first if self.stream == 1 else self.repeated
        self.transport.write(frame(HEADERS, END_STREAM | 0x4, self.stream, block))
        self.stream += 2

    def data_received(self, data: bytes) -> None:
        buffer = self.buffer + data
        while len(buffer) >= 9:
            length = int.from_bytes(buffer[:3], "big")
            if len(buffer) < 9 + length:
                break
            kind, flags = buffer[3], buffer[4]
            buffer = buffer[9 + length :]
            if kind == SETTINGS and not flags & ACK:
                self.transport.write(frame(SETTINGS, ACK, 0))
            elif kind in (DATA, HEADERS) and flags & END_STREAM:
                self.answered += 1
                self.send()
            elif kind in (RST_STREAM, GOAWAY):
                raise SystemExit(f"bench.h2c_calls: the edge sent frame type {kind} (a reset or GOAWAY)")
        self.buffer = buffer

    def connection_lost(self, exc: Exception | None) -> None:
        self.done.set_result(self.answered)


def edge_server(folder: str, loop: asyncio.AbstractEventLoop) -> Any:
    """The edge's HTTP/1.1 protocol factory (which hands a preface over to HTTP/2), serving ``folder``, built as the worker builds it."""
    os.environ["HANDLER_FOLDER"] = folder
    os.environ.setdefault("SERVER_NUMTHREADS", "4")
    # Generous bounds: under callgrind the loop lags by far more than a call may wait in a real worker.
    os.environ.setdefault("SERVER_CALL_TIMEOUT", "600")
    os.environ.setdefault("SERVER_QUEUE_TARGET", "600")
    from gunicorn.config import Config as GunicornConfig

    from funcwsgi.adapters.gunicorn import gunicorn_settings
    from funcwsgi.adapters.gunicorn.edge import Edge
    from funcwsgi.adapters.gunicorn.http1 import Http1Connection
    from funcwsgi.adapters.gunicorn.http2_on_demand import install
    from funcwsgi.application import make_app
    from funcwsgi.process import start_process

    service = make_app()
    start_process(service)  # gc.freeze() and SERVER_GC_THRESHOLD, as a worker does before serving
    cfg = GunicornConfig()
    for name, value in gunicorn_settings(service.config).items():
        if name in cfg.settings:
            cfg.set(name, value)
    edge = Edge(service, cfg, loop)
    install(edge, cfg)
    return edge, lambda: Http1Connection(edge)


async def serve(folder: str, connections: int, calls: int) -> float:
    """CPU seconds per call of ``calls`` calls over ``connections`` connections."""
    loop = asyncio.get_running_loop()
    edge, protocol = edge_server(folder, loop)
    server = await loop.create_server(protocol, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    left = [calls]
    started = time.process_time()
    finished = []
    for _ in range(connections):
        done: asyncio.Future[int] = loop.create_future()
        finished.append(done)
        await loop.create_connection(lambda done=done: Client(left, done), "127.0.0.1", port)  # type: ignore[misc]
    answered = sum(await asyncio.gather(*finished))
    took = time.process_time() - started
    server.close()
    edge.runner.shutdown()
    if answered != calls:
        raise SystemExit(f"bench.h2c_calls: {answered} of {calls} calls answered")
    return took / calls


def count(folder: str, connections: int, calls: int) -> int:
    """Instructions per call: two runs under callgrind, ``calls`` and ``3 * calls``, the difference over ``2 * calls``."""
    totals = []
    for n in (calls, 3 * calls):
        with tempfile.TemporaryDirectory(prefix="bench-h2c-calls-") as tmp:
            out = Path(tmp) / "callgrind.out"
            command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable, "-m", "bench.h2c_calls", folder,
                       "--connections", str(connections), "--calls", str(n)]
            subprocess.run(command, cwd=REPO, env={**os.environ, "PYTHONHASHSEED": "0"}, check=True, capture_output=True, timeout=3600)
            summary = next(line for line in out.read_text().splitlines() if line.startswith(("summary:", "totals:")))
            totals.append(int(summary.split()[1]))
    return (totals[1] - totals[0]) // (2 * calls)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.h2c_calls", description=__doc__.splitlines()[0])
    parser.add_argument("folder", nargs="?", default=str(BENCH / "apps" / "hello"), help="the function's folder (default: the benchmark's hello)")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--count", action="store_true", help="instructions per call under callgrind")
    args = parser.parse_args(argv)
    if args.count:
        per_call = count(args.folder, args.connections, args.calls)
        print(f"edge h2c ({Path(args.folder).name}, {args.connections} connections): {per_call:,} instructions per call", flush=True)
        return 0
    import uvloop

    per_call_s = uvloop.run(serve(args.folder, args.connections, args.calls))
    print(f"edge h2c: {per_call_s * 1e6:.1f} µs of CPU per call (clients included)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
