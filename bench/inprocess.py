"""In-process cost per request, no sockets: a WSGI server's view of each app.

Every variant is called the way a server calls it (a fresh environ dict, a
``start_response``, the body iterated and closed). The funcwsgi stack is
measured with its layers added one at a time from the inside out, so each
layer's cost is the difference from the row before it. Variants are
interleaved round by round and the median round is reported.

Run by the harness as a subprocess (its stdout, where access logs go, is
discarded)::

    python -m bench.inprocess --json out.json [--rounds 7] [--calls 20000]

or one variant alone, for callgrind instruction counts::

    python -m bench.inprocess --only call-path --calls 1000
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from werkzeug.test import EnvironBuilder

BENCH = Path(__file__).resolve().parent
HELLO = BENCH / "apps" / "hello"
#: The same hello world in the Flask-context signatures (docs/migration-kyma-python314.md quotes their cost).
FLASK_FUNCTIONS = (
    ("stack-flask-global", BENCH / "apps" / "flask_global", "funcwsgi default stack, main() with flask.request"),
    ("stack-flask-request", BENCH / "apps" / "flask_request", "funcwsgi default stack, main(request: flask.Request)"),
)
sys.path.insert(0, str(BENCH / "apps"))

WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Callable[[bytes], None]:
    return _write


def _write(data: bytes) -> None:
    pass


def base_environ() -> dict[str, Any]:
    """A GET as a server hands it over; as gunicorn, the default server, hands it (``gunicorn.socket``)."""
    environ = EnvironBuilder(path="/", base_url="http://127.0.0.1:8080/", headers={"User-Agent": "bench", "Accept": "*/*"}).get_environ()
    environ["SERVER_SOFTWARE"] = "bench"
    environ["gunicorn.socket"] = _CLIENT_SOCKET
    return environ


def handoff_environ() -> dict[str, Any]:
    """The same GET from a server that does not hand over its socket (waitress, granian)."""
    environ = base_environ()
    del environ["gunicorn.socket"]
    return environ


class LentThreads:
    """What gunicorn's worker lends the timeout layer; no call here is ever stuck."""

    def call_stuck(self, environ: dict[str, Any], extra_threads: int) -> None:
        raise AssertionError("a benchmark call timed out")

    call_back = call_stuck


# One end of a socket pair stands for the client's socket: the timeout layer
# writes to it only if a call passes its deadline, which none does here.
_CLIENT_SOCKET, _PEER = socket.socketpair()


def call_many(app: WSGIApp, environ: dict[str, Any], calls: int) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the whole process) per call over ``calls`` calls.

    CPU time counts every thread (the timeout layer runs the function on
    another one) and, unlike wall time, not the time spent waiting for a core
    that other processes hold, which on a shared machine is most of the noise.
    """
    started, started_cpu = time.perf_counter(), time.process_time()
    for _ in range(calls):
        body = app(dict(environ), start_response)
        for _chunk in body:
            pass
        close = getattr(body, "close", None)
        if close is not None:
            close()
    return (time.perf_counter() - started) / calls, (time.process_time() - started_cpu) / calls


def werkzeug_app() -> WSGIApp:
    from werkzeug.wrappers import Request, Response

    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        Request(environ)
        return Response("Hello, world!")(environ, start_response)

    return app


def flask_app() -> WSGIApp:
    from flask import Flask

    app = Flask("bench")
    app.add_url_rule("/", "hello", lambda: "Hello, world!")
    return app  # type: ignore[return-value]


REFERENCES = ("bare", "werkzeug", "flask")


def variants(trace_endpoint: str | None, *, funcwsgi: bool = True) -> list[tuple[str, str, WSGIApp]]:
    """(id, label, app) in table order: references, then funcwsgi's stack grown layer by layer."""
    from bare import app as bare_app

    from funcwsgi.application import FunctionService, build_service
    from funcwsgi.config import Config
    from funcwsgi.loader import load_function
    from funcwsgi.process import start_worker
    from funcwsgi.stack import LAYERS, build_stack

    found: list[tuple[str, str, WSGIApp]] = [
        ("bare", "bare WSGI hello world", bare_app),
        ("werkzeug", "werkzeug Request + Response", werkzeug_app()),
    ]
    try:
        found.append(("flask", "Flask", flask_app()))
    except ImportError:
        pass
    if not funcwsgi:
        return found
    config = Config.from_env({"HANDLER_FOLDER": str(HELLO)})
    loaded = load_function(config)
    service = build_service(config, loaded)  # as a server does: logging configured, then the stack
    enabled = [layer for layer in LAYERS if layer.enabled(config)]
    for count in range(len(enabled) + 1):
        layers = enabled[len(enabled) - count :]
        app, names = build_stack(config, loaded, layers)
        if count == 0:
            found.append(("call-path", "funcwsgi call path (function only)", app))
        else:
            found.append((f"layer-{layers[0].name}", f"+ {layers[0].name}", app))
    found.append(("stack", f"funcwsgi default stack, as under gunicorn ({' > '.join(service.layers)})", service))
    found.append(("stack-handoff", "funcwsgi default stack, timeout by hand-off (waitress, granian)", service))
    logged = FunctionService(config.replace(server_access_log=True), loaded)
    found.append(("stack-access-log", f"funcwsgi stack, access log on ({' > '.join(logged.layers)})", logged))
    for key, folder, label in FLASK_FUNCTIONS:
        flask_config = Config.from_env({"HANDLER_FOLDER": str(folder)})
        found.append((key, label, FunctionService(flask_config, load_function(flask_config))))
    if trace_endpoint and any(layer.name == "tracing" for layer in LAYERS):
        traced_config = config.replace(trace_collector_endpoint=trace_endpoint)
        traced = FunctionService(traced_config, loaded)
        found.append(("stack-tracing", f"funcwsgi stack, tracing on ({' > '.join(traced.layers)})", traced))
    from funcwsgi.timeouts.watchdog import use_server_threads

    use_server_threads(LentThreads())
    start_worker(service)
    return found


def environ_for(variant: str) -> dict[str, Any]:
    return handoff_environ() if variant == "stack-handoff" else base_environ()


def measure(rounds: int, calls: int, trace_endpoint: str | None) -> list[dict[str, Any]]:
    apps = variants(trace_endpoint)
    environs = {key: environ_for(key) for key, _, _ in apps}
    for key, _, app in apps:  # warm-up: first-call imports and caches
        call_many(app, environs[key], max(100, calls // 20))
    wall: dict[str, list[float]] = {key: [] for key, _, _ in apps}
    cpu: dict[str, list[float]] = {key: [] for key, _, _ in apps}
    for round_number in range(rounds):
        ordered = apps if round_number % 2 == 0 else list(reversed(apps))
        for key, _, app in ordered:
            seconds, cpu_seconds = call_many(app, environs[key], calls)
            wall[key].append(seconds * 1e6)
            cpu[key].append(cpu_seconds * 1e6)
    return [
        {
            "id": key,
            "label": label,
            "us": round(statistics.median(wall[key]), 3),
            "cpu_us": round(statistics.median(cpu[key]), 3),
            "samples_us": [round(s, 3) for s in wall[key]],
        }
        for key, label, _ in apps
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.inprocess", description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--trace-endpoint", help="OTLP/HTTP URL for the tracing-on variant")
    parser.add_argument("--only", help="call one variant --calls times and exit (for callgrind)")
    args = parser.parse_args(argv)
    if args.only:
        apps = {key: app for key, _, app in variants(args.trace_endpoint, funcwsgi=args.only not in REFERENCES)}
        if args.only not in apps:
            parser.error(f"--only {args.only!r}: expected one of {', '.join(apps)}")
        environ = environ_for(args.only)
        call_many(apps[args.only], environ, 50)
        call_many(apps[args.only], environ, args.calls)
        return 0
    results = measure(args.rounds, args.calls, args.trace_endpoint)
    text = json.dumps(results, indent=2)
    if args.json:
        args.json.write_text(text)
    else:
        print(text, file=sys.stderr)  # stdout carries the access logs
    return 0


if __name__ == "__main__":
    sys.exit(main())
