"""What the observability layers add per call, in-process, one layer at a time.

    taskset -c 1 .venv/bin/python benchmarks/observability_layers.py [calls]

Calls a hello-world function through stacks that differ by one layer each
(cloudevents, metrics, body limit, timeout, access log, tracing), from the
bare stack (errors, request id, reserved routes) to the default one, and
prints the best of five interleaved rounds as CPU microseconds per call
(CPU time, not wall time: on a shared machine it is the steadier of the two).
Log lines go, as JSON, to /dev/null through the handler a server installs, so
the access log's cost is its real cost minus the terminal. Tracing exports
nowhere: the span processor is not started, so what is measured is the
layer's own work per call.
"""

from __future__ import annotations

import io
import logging
import os
import sys
import time
from collections.abc import Callable
from typing import Any

from funcwsgi import logs, make_app
from funcwsgi.config import Config

ROUNDS = 5
OFF = dict(server_access_log=False, server_metrics=False, server_cloudevents=False, server_call_timeout=0, server_max_body_size=0)
STACKS: list[tuple[str, dict[str, Any]]] = [
    ("bare: errors, request id, reserved routes", dict(OFF)),
    ("+ cloudevents", dict(OFF, server_cloudevents=True)),
    ("+ metrics", dict(OFF, server_cloudevents=True, server_metrics=True)),
    ("+ body limit", dict(OFF, server_cloudevents=True, server_metrics=True, server_max_body_size=100 * 1024 * 1024)),
    ("+ timeout = the default stack (access log off)", dict(server_access_log=False)),
    ("+ access log (SERVER_ACCESS_LOG=true)", dict(server_access_log=True)),
    ("+ tracing (not exporting)", dict(server_access_log=True, trace_collector_endpoint="http://127.0.0.1:9/v1/traces")),
]


def hello(req: Any, res: Any) -> None:
    res.set_body("hello")


def log_to_devnull() -> None:
    """The root handler a server gets from configure_logging, writing to /dev/null."""
    handler = logs.build_handler(Config.from_env({}), open(os.devnull, "w"))  # noqa: SIM115 - lives as long as the process
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO)
    logs._configured = True
    logs._installed = handler


def cpu_per_call(app: Callable[..., Any], calls: int) -> float:
    environ = {
        "REQUEST_METHOD": "GET", "PATH_INFO": "/", "SCRIPT_NAME": "", "QUERY_STRING": "", "SERVER_NAME": "bench",
        "SERVER_PORT": "80", "SERVER_PROTOCOL": "HTTP/1.1", "wsgi.url_scheme": "http", "wsgi.input": io.BytesIO(b""),
    }

    def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> None:
        return None

    started = time.process_time()
    for _ in range(calls):
        body = app(dict(environ), start_response)
        for _chunk in body:
            pass
        close = getattr(body, "close", None)
        if close is not None:
            close()
    return (time.process_time() - started) / calls * 1e6


def main(argv: list[str]) -> int:
    calls = int(argv[1]) if len(argv) > 1 else 20000
    log_to_devnull()
    apps = [(label, make_app(hello, environ={}, **settings)) for label, settings in STACKS]
    best = {label: float("inf") for label, _ in apps}
    for label, app in apps:
        cpu_per_call(app, 1000)  # warm up
    for _ in range(ROUNDS):
        for label, app in apps:
            best[label] = min(best[label], cpu_per_call(app, calls))
    previous = None
    for label, app in apps:
        delta = "" if previous is None else f"  ({best[label] - previous:+.2f})"
        print(f"{best[label]:7.2f} µs  {label}{delta}   [{' > '.join(app.layers)}]")
        previous = best[label]
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
