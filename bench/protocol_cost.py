"""Instructions per request of the event-loop worker's HTTP protocol, next to uvicorn's own, under callgrind.

The slow-client limits (:mod:`funcwsgi.adapters._event_loop_limits`) subclass
uvicorn's httptools protocol; what they add to a request is too small for a
wall-clock benchmark on a shared machine to see. Here one connection's
protocol is driven in-process on the worker's own loop (uvloop, as
``loop="auto"`` picks it) with a transport that only counts what is written:
kept-alive requests fed as raw bytes, each answered by a bare ASGI hello world
(or by funcwsgi's own ASGI service, ``--app funcwsgi``) before the next one is
fed. Each protocol runs twice under ``valgrind --tool=callgrind``, with a small
and a large number of requests; the difference divided by the difference in
requests is one request's instructions, start-up and imports cancelled out::

    python -m bench.protocol_cost                       # plain and limited, a GET and a POST
    python -m bench.protocol_cost --app funcwsgi        # the same, answered by funcwsgi's hello_async
    python -m bench.protocol_cost --drive limited --requests 1000   # the driver alone, no callgrind
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from .callgrind import available, counted_run

REPO = Path(__file__).resolve().parent.parent
HELLO_ASYNC = REPO / "bench" / "apps" / "hello_async"
FEW, MANY = 300, 1800
PROTOCOLS = ("plain", "limited")
REQUESTS = {
    "get": b"GET / HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: bench\r\nAccept: */*\r\n\r\n",
    "post": b"POST / HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: bench\r\nContent-Type: text/plain\r\nContent-Length: 13\r\n\r\nHello, world!",
}


class CountingTransport(asyncio.Transport):
    """A client that reads everything at once: the response bytes are counted and dropped."""

    def __init__(self) -> None:
        super().__init__()
        self.written = 0
        self.closing = False

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"sockname": ("127.0.0.1", 8080), "peername": ("127.0.0.1", 50000)}.get(name, default)

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self.written += len(data)

    def get_write_buffer_size(self) -> int:
        return 0

    def is_closing(self) -> bool:
        return self.closing

    def close(self) -> None:
        self.closing = True

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass


def protocol_class(name: str, settings: Any) -> type[asyncio.Protocol]:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    if name == "plain":
        return HttpToolsProtocol
    from funcwsgi.adapters._event_loop_limits import limited_protocol

    return limited_protocol(settings)


def application(name: str) -> tuple[Any, Any]:
    """The ASGI app and the funcwsgi settings the limits read."""
    from funcwsgi.config import Config

    if name == "bare":
        sys.path.insert(0, str(REPO / "bench" / "apps"))
        from bare_asgi import app  # type: ignore[import-not-found]

        return app, Config.from_env({})
    from funcwsgi.application import make_app

    service = make_app(environ={"HANDLER_FOLDER": str(HELLO_ASYNC)})
    return service.asgi, service.config


def drive(protocol_name: str, app_name: str, request: bytes, requests: int) -> int:
    """Serves ``requests`` kept-alive requests on one connection; returns the bytes answered."""
    import uvloop
    from uvicorn.config import Config as UvicornConfig
    from uvicorn.server import ServerState

    app, settings = application(app_name)
    # As the worker configures uvicorn (funcwsgi/adapters/_event_loop_worker.py), forwarded headers included.
    config = UvicornConfig(
        app,
        http=protocol_class(protocol_name, settings),
        lifespan="off",
        access_log=False,
        server_header=False,
        log_config=None,
        forwarded_allow_ips="127.0.0.1",
    )
    config.load()
    state = ServerState()
    state.default_headers = [(b"date", b"Tue, 01 Dec 2026 12:00:00 GMT"), *config.encoded_headers]
    loop = uvloop.new_event_loop()
    asyncio.set_event_loop(loop)
    transport = CountingTransport()

    async def serve() -> None:
        protocol = config.http_protocol_class(config=config, server_state=state, app_state={}, _loop=loop)  # type: ignore[call-arg]
        protocol.connection_made(transport)
        for served in range(1, requests + 1):
            protocol.data_received(request)
            while state.total_requests < served:
                await asyncio.sleep(0)
        if transport.closing:
            raise RuntimeError("the connection was closed before the last request")
        protocol.connection_lost(None)

    loop.run_until_complete(serve())
    loop.close()
    return transport.written


def instructions(protocol_name: str, app_name: str, request: str, requests: int, workdir: Path) -> int:
    module_args = ["bench.protocol_cost", "--drive", protocol_name, "--app", app_name, "--request", request, "--requests", str(requests)]
    return counted_run(module_args, workdir / f"callgrind.{protocol_name}.{request}.{requests}", protocol_name, timeout=900)


def per_request(protocol_name: str, app_name: str, request: str) -> int:
    with tempfile.TemporaryDirectory(prefix="bench-protocol-") as tmp:
        few = instructions(protocol_name, app_name, request, FEW, Path(tmp))
        many = instructions(protocol_name, app_name, request, MANY, Path(tmp))
    return round((many - few) / (MANY - FEW))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.protocol_cost", description=__doc__.splitlines()[0])
    parser.add_argument("--app", choices=("bare", "funcwsgi"), default="bare", help="what answers: a bare ASGI hello world or funcwsgi's hello_async")
    parser.add_argument("--request", choices=sorted(REQUESTS), action="append", help="the request fed (repeatable; default: get and post)")
    parser.add_argument("--protocol", choices=PROTOCOLS, action="append", help="the protocols measured (repeatable; default: both)")
    parser.add_argument("--drive", choices=PROTOCOLS, help="run the driver alone with this protocol (what callgrind runs)")
    parser.add_argument("--requests", type=int, default=1000, help="requests the driver serves (with --drive)")
    args = parser.parse_args(argv)
    requests = args.request or sorted(REQUESTS)
    if args.drive:
        written = drive(args.drive, args.app, REQUESTS[requests[0]], args.requests)
        print(f"{args.requests} requests, {written} bytes answered")
        return 0
    if not available():
        parser.error("valgrind is not installed (Debian package 'valgrind')")
    results: dict[str, Any] = {}
    for request in requests:
        counts = {name: per_request(name, args.app, request) for name in args.protocol or PROTOCOLS}
        if len(counts) == 2:
            counts["limits add"] = counts["limited"] - counts["plain"]
        results[request] = counts
    print(json.dumps({"app": args.app, "instructions_per_request": results}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
