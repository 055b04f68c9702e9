"""What the call-timeout layer adds per call, in-process, on one thread.

    .venv/bin/python benchmarks/timeout_overhead.py [calls]

Calls a hello-world function through the default stack with the timeout layer
(SERVER_CALL_TIMEOUT=180) and without it (SERVER_CALL_TIMEOUT=0), and the
layer alone around a bare WSGI app, and prints the best of five rounds as
wall-clock and CPU microseconds per call. The access log is switched off so
that writing log lines does not drown the difference. Pin it to one core
(``taskset -c 0``) on a shared machine.
"""

from __future__ import annotations

import io
import logging
import sys
import time
from collections.abc import Callable
from typing import Any

from funcwsgi import make_app
from funcwsgi.middleware.timeout import TimeoutMiddleware

ROUNDS = 5


def hello(req: Any, res: Any) -> None:
    res.set_body("hello")


def bare(environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
    start_response("200 OK", [("Content-Length", "5")])
    return [b"hello"]


def per_call(app: Callable[..., Any], calls: int) -> tuple[float, float]:
    environ = {
        "REQUEST_METHOD": "GET",
        "PATH_INFO": "/",
        "SCRIPT_NAME": "",
        "QUERY_STRING": "",
        "SERVER_NAME": "bench",
        "SERVER_PORT": "80",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(b""),
    }

    def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> None:
        return None

    def run(count: int) -> None:
        for _ in range(count):
            body = app(dict(environ), start_response)
            for _chunk in body:
                pass
            close = getattr(body, "close", None)
            if close is not None:
                close()

    run(min(calls, 2000))  # warm up: call threads made, caches filled
    best_wall = best_cpu = float("inf")
    for _ in range(ROUNDS):
        wall, cpu = time.perf_counter(), time.process_time()
        run(calls)
        best_wall = min(best_wall, (time.perf_counter() - wall) / calls * 1e6)
        best_cpu = min(best_cpu, (time.process_time() - cpu) / calls * 1e6)
    return best_wall, best_cpu


def main() -> None:
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    logging.disable(logging.CRITICAL)
    rows = [
        ("default stack, timeout on", make_app(hello, environ={}, server_access_log=False)),
        ("default stack, timeout off", make_app(hello, environ={}, server_access_log=False, server_call_timeout=0)),
        ("timeout layer alone", TimeoutMiddleware(bare, seconds=180, max_threads=4)),
        ("bare WSGI app", bare),
    ]
    print(f"{'':28} {'wall µs':>8} {'CPU µs':>8}   ({calls} calls, best of {ROUNDS})")
    for label, app in rows:
        wall, cpu = per_call(app, calls)
        layers = " > ".join(getattr(app, "layers", [])) or ""
        print(f"{label:28} {wall:8.2f} {cpu:8.2f}   {layers}")


if __name__ == "__main__":
    main()
