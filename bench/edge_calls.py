"""Instructions per call of the edge worker's HTTP/1.1 path in one process, no sockets, beside uvicorn serving func-python.

The event-loop benchmark's CPU per call moves with the machine's load; this
counts instructions instead, which do not. ``connections`` connections
(fake transports) each send ``GET /`` and the next one as soon as the answer
is complete, on one uvloop loop: the edge (``Http1Connection``, the call
runner, the stack, the function) is driven exactly as the worker drives it,
minus the kernel's part (the sockets), which is about the same for both. The
same driver feeds uvicorn's httptools protocol serving Knative's func-python
(in its own virtual environment). ``--count`` runs the driver twice under
callgrind (N and 3N calls) and divides the difference by 2N, so start-up and
the warm-up cancel out.

    python -m bench.edge_calls --count                    # both, the async I/O-bound function (5 ms wait), 400 connections
    python -m bench.edge_calls --count edge-inline bench/apps/hello --connections 16   # a plain hello, no pool
    python -m bench.edge_calls edge bench/apps/hello      # one run, timed: CPU µs per call (noisy on a shared machine)
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
REQUEST = b"GET / HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n"
#: How an answer of the benchmark's functions ends: Content-Length framed (the edge) or chunked (uvicorn).
ENDS = (b"Hello, world!", b"!\r\n0\r\n\r\n")
WARMUP_CALLS = 2000
#: The edge as it runs; the edge with a plain function's call run inline (no pool); uvicorn serving func-python.
KINDS = ("edge", "edge-inline", "uvicorn")
#: The I/O-bound function's wait here: short, so a count under callgrind takes minutes, not hours.
WAIT_SECONDS = "0.005"


class Transport:
    """What a protocol sees of its connection: writes are read for the end of the answer, then the next request is sent."""

    def __init__(self, driver: Driver, protocol: Any) -> None:
        self.driver = driver
        self.protocol = protocol
        self.closing = False

    def write(self, data: bytes) -> None:
        if data.startswith(b"HTTP/1.1 ") and not data.startswith(b"HTTP/1.1 200"):
            raise SystemExit(f"bench.edge_calls: an answer other than 200: {data[:200]!r}")
        if data.endswith(ENDS):
            self.driver.answered(self)

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"peername": ("127.0.0.1", 40000), "sockname": ("127.0.0.1", 8080)}.get(name, default)

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        pass

    def get_write_buffer_size(self) -> int:
        return 0

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass

    def is_closing(self) -> bool:
        return self.closing

    def close(self) -> None:
        self.closing = True

    abort = close


class Driver:
    """``connections`` connections answering ``calls`` calls between them, one request at a time each."""

    def __init__(self, loop: asyncio.AbstractEventLoop, make: Any, connections: int) -> None:
        self.loop = loop
        self.make = make
        self.connections = connections
        self.unsent = 0
        self.unanswered = 0
        self.done: asyncio.Future[None] | None = None

    async def run(self, calls: int) -> None:
        self.unsent = self.unanswered = calls
        self.done = self.loop.create_future()
        for _ in range(min(self.connections, calls)):
            protocol = self.make()
            protocol.connection_made(Transport(self, protocol))
            self.send(protocol)
        await self.done

    def send(self, protocol: Any) -> None:
        self.unsent -= 1
        self.loop.call_soon(protocol.data_received, REQUEST)

    def answered(self, transport: Transport) -> None:
        self.unanswered -= 1
        if self.unsent > 0:
            self.send(transport.protocol)
        elif self.unanswered == 0 and self.done is not None:
            self.done.set_result(None)


def edge_protocol(folder: str, loop: asyncio.AbstractEventLoop, inline: bool = False) -> Any:
    """The edge's connection protocol serving ``folder``; ``inline``: a plain function's call runs on the loop's
    thread, its answer handed back with ``call_soon``, so the difference from the pool is the hand-off alone."""
    os.environ["HANDLER_FOLDER"] = folder
    # Generous bounds: under callgrind the loop lags by far more than a call may wait in a real worker.
    os.environ.setdefault("SERVER_CALL_TIMEOUT", "600")
    os.environ.setdefault("SERVER_QUEUE_TARGET", "600")
    from funcwsgi.adapters.gunicorn.edge import Edge
    from funcwsgi.adapters.gunicorn.http1 import Http1Connection
    from funcwsgi.application import make_app
    from funcwsgi.process import start_process

    class Settings:  # gunicorn's, at their defaults
        threads = 4
        limit_request_line = 4094
        limit_request_fields = 100
        limit_request_field_size = 8190

    service = make_app()
    start_process(service)  # gc.freeze() and SERVER_GC_THRESHOLD, as a worker does before serving
    edge = Edge(service, Settings(), loop)
    if inline:
        runner = edge.runner
        runner.threads.submit = lambda job: job()  # type: ignore[method-assign]
        runner.call_on_loop = loop.call_soon  # type: ignore[assignment]
    return lambda: Http1Connection(edge)


def uvicorn_protocol(folder: str, loop: asyncio.AbstractEventLoop) -> Any:
    sys.path.insert(0, folder)
    from serve import app  # type: ignore[import-not-found]
    from uvicorn.config import Config
    from uvicorn.server import ServerState

    config = Config(app=app, http="httptools", lifespan="off", access_log=False, log_level="warning")
    config.load()
    protocol = config.http_protocol_class  # httptools' protocol, as uvicorn's server makes it
    state = ServerState()
    return lambda: protocol(config=config, server_state=state, app_state={}, _loop=loop)


def drive(kind: str, folder: str, connections: int, calls: int) -> float:
    """CPU seconds per call of ``calls`` calls, after a warm-up."""
    import uvloop

    loop = uvloop.new_event_loop()
    asyncio.set_event_loop(loop)
    make = uvicorn_protocol(folder, loop) if kind == "uvicorn" else edge_protocol(folder, loop, inline=kind == "edge-inline")
    driver = Driver(loop, make, connections)
    loop.run_until_complete(driver.run(WARMUP_CALLS))
    gc.collect()
    started = time.process_time()
    loop.run_until_complete(driver.run(calls))
    return (time.process_time() - started) / calls


def count(kind: str, folder: str, connections: int, calls: int, python: str) -> int:
    """Instructions per call: two runs under callgrind, ``calls`` and ``3 * calls``, the difference over ``2 * calls``."""
    totals = []
    for n in (calls, 3 * calls):
        with tempfile.TemporaryDirectory(prefix="bench-edge-calls-") as tmp:
            out = Path(tmp) / "callgrind.out"
            command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", python, "-m", "bench.edge_calls", kind, folder,
                       "--connections", str(connections), "--calls", str(n)]
            env = {**os.environ, "PYTHONHASHSEED": "0", "BENCH_WAIT_SECONDS": WAIT_SECONDS}
            subprocess.run(command, cwd=REPO, env=env, check=True, capture_output=True, timeout=3600)
            # Every part: a `callgrind_control --dump` run elsewhere on the machine (bench.cold_start) splits a run into several.
            totals.append(counted(Path(tmp)))
    return (totals[1] - totals[0]) // (2 * calls)


def counted(folder: Path) -> int:
    """The instructions of one run under callgrind: the sum over its dumps in ``folder`` (callgrind.out, .1, .2, ...)."""
    total = 0
    for dump in folder.glob("callgrind.out*"):
        summary = next(line for line in dump.read_text().splitlines() if line.startswith(("summary:", "totals:")))
        total += int(summary.split()[1])
    return total


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.edge_calls", description=__doc__.splitlines()[0])
    parser.add_argument("kind", nargs="?", choices=KINDS, help="one run of one server (default with --count: both)")
    parser.add_argument("folder", nargs="?", help="the function: an app folder (edge) or func-python's (uvicorn)")
    parser.add_argument("--connections", type=int, default=400)
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--count", action="store_true", help="instructions per call under callgrind")
    args = parser.parse_args(argv)
    os.environ.setdefault("BENCH_WAIT_SECONDS", WAIT_SECONDS)  # read by the I/O-bound functions
    if args.count:
        from .environment import venv_python

        func_python = BENCH / "alternatives" / "func_python_function"
        rows = [(args.kind or "edge", args.folder or str(BENCH / "apps" / "io_async"), sys.executable)]
        if args.kind is None:
            rows.append(("uvicorn", str(func_python), str(venv_python("io-func-python-venv", func_python / "requirements.txt"))))
        for kind, folder, python in rows:
            python = subprocess.run([python, "-c", "import sys; print(sys.executable)"], capture_output=True, text=True, check=True).stdout.strip()
            per_call = count(kind, folder, args.connections, args.calls, python)
            print(f"{kind} ({Path(folder).name}, {args.connections} connections): {per_call:,} instructions per call", flush=True)
        return 0
    if args.kind is None or args.folder is None:
        parser.error("name a server and a function folder, or --count")
    per_call = drive(args.kind, args.folder, args.connections, args.calls)
    print(f"{args.kind}: {per_call * 1e6:.1f} µs of CPU per call")
    return 0


if __name__ == "__main__":
    sys.exit(main())
