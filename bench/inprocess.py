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

The event-loop path has variants of its own (``loop-*``, :data:`LOOP_VARIANTS`):
each is an ASGI application called as uvicorn calls it (a scope, ``receive``
and ``send``), every call a task of its own (``loop.create_task``, as servers
run them) with a fixed number of calls in flight, on uvloop. They are run with
``--only`` (callgrind) or timed with ``--loop``; the default timing run leaves
them out.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import socket
import statistics
import sys
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from werkzeug.test import EnvironBuilder

from funcwsgi.serving import SERVER_CALL_KEY
from tests.support.socket_call import SocketCall

from .otel_attributes import ATTRIBUTES

BENCH = Path(__file__).resolve().parent
HELLO = BENCH / "apps" / "hello"
#: The same hello world in the Flask-context signatures (docs/migration-kyma-python314.md quotes their cost).
FLASK_FUNCTIONS = (
    ("stack-flask-global", BENCH / "apps" / "flask_global", "funcwsgi default stack, main() with flask.request"),
    ("stack-flask-request", BENCH / "apps" / "flask_request", "funcwsgi default stack, main(request: flask.Request)"),
)
sys.path.insert(0, str(BENCH / "apps"))

WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]
Message = dict[str, Any]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[dict[str, Any], Callable[[], Awaitable[Message]], Send], Awaitable[None]]

#: The collector's thresholds before anything here changed them: Python's own defaults.
PYTHON_GC_THRESHOLD = gc.get_threshold()


def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Callable[[bytes], None]:
    return _write


def _write(data: bytes) -> None:
    pass


def base_environ() -> dict[str, Any]:
    """A GET as a server hands it over; as the default server hands it (with a call it can answer at once)."""
    environ = EnvironBuilder(path="/", base_url="http://127.0.0.1:8080/", headers={"User-Agent": "bench", "Accept": "*/*"}).get_environ()
    environ["SERVER_SOFTWARE"] = "bench"
    environ[SERVER_CALL_KEY] = SocketCall(_CLIENT_SOCKET, None, LentThreads())
    return environ


def handoff_environ() -> dict[str, Any]:
    """The same GET from a server that cannot answer a call at once (waitress, granian)."""
    environ = base_environ()
    del environ[SERVER_CALL_KEY]
    return environ


class LentThreads:
    """What gunicorn's worker lends the timeout layer; no call here is ever stuck."""

    def call_stuck(self, key: Any, extra_threads: int) -> None:
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


#: The floor variants' tracer providers (not the process's global one, which the tracing layer sets).
FLOOR_PROVIDERS: list[Any] = []


def flush_spans() -> None:
    """Export every span still batched, on this thread, before the process exits.

    At exit funcwsgi gives the last export a fraction of a second (shutdown
    must not wait on telemetry), and under callgrind, fifty times slower, part
    of it would be left undone, a part that varies with the machine's load: a
    counted run exports all it made.
    """
    from opentelemetry import trace

    for provider in (trace.get_tracer_provider(), *FLOOR_PROVIDERS):
        flush = getattr(provider, "force_flush", None)
        if flush is not None:
            flush()


def otel_floor_app(trace_endpoint: str, attributes: dict[str, Any] | None = None) -> WSGIApp:
    """The bare hello world in one span, as OpenTelemetry's SDK makes it at the least: the floor of a traced call.

    One ``start_as_current_span`` and its end per call, the SDK's batch span
    processor and its OTLP/HTTP exporter at their defaults, exporting to
    ``trace_endpoint``. A traced funcwsgi call is judged against what this adds
    to the bare hello world (docs/performance.md, target 1.2×). With
    ``attributes`` the span carries them and a status code, as funcwsgi's does:
    what the SDK itself spends on the attributes funcwsgi's span keeps.
    """
    from bare import app as bare_app
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    from opentelemetry.trace import SpanKind

    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=trace_endpoint)))
    FLOOR_PROVIDERS.append(provider)
    tracer = provider.get_tracer("bench")

    if attributes is None:

        def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
            with tracer.start_as_current_span("GET /"):
                return bare_app(environ, start_response)  # type: ignore[no-any-return]

        return app

    def attributed(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        with tracer.start_as_current_span("GET /", kind=SpanKind.SERVER, attributes=attributes) as span:
            body = bare_app(environ, start_response)
            span.set_attribute("http.response.status_code", 200)
            return body  # type: ignore[no-any-return]

    return attributed


REFERENCES = ("bare", "werkzeug", "flask", "otel-floor", "otel-floor-attributes")


def variants(trace_endpoint: str | None, *, funcwsgi: bool = True) -> list[tuple[str, str, WSGIApp]]:
    """(id, label, app) in table order: references, then funcwsgi's stack grown layer by layer."""
    from bare import app as bare_app

    from funcwsgi.application import FunctionService, build_service
    from funcwsgi.config import Config
    from funcwsgi.handler.loader import load_function
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
    if trace_endpoint:
        found.append(("otel-floor", "bare WSGI hello world in one OpenTelemetry SDK span (batch, OTLP/HTTP export)", otel_floor_app(trace_endpoint)))
        found.append(
            (
                "otel-floor-attributes",
                "the same span with funcwsgi's server span attributes (7) and kind",
                otel_floor_app(trace_endpoint, ATTRIBUTES),
            )
        )
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


# -- the event-loop path ------------------------------------------------------------------

#: A GET of / as uvicorn hands it to an ASGI application (copied per call, as a server makes one per call).
SCOPE: dict[str, Any] = {
    "type": "http",
    "asgi": {"version": "3.0"},
    "http_version": "1.1",
    "method": "GET",
    "scheme": "http",
    "path": "/",
    "raw_path": b"/",
    "query_string": b"",
    "root_path": "",
    "headers": [(b"host", b"127.0.0.1:8080"), (b"user-agent", b"bench"), (b"accept", b"*/*")],
    "client": ("127.0.0.1", 5555),
    "server": ("127.0.0.1", 8080),
}
_REQUEST: Message = {"type": "http.request", "body": b"", "more_body": False}


async def _receive() -> Message:
    return _REQUEST


async def _discard(message: Message) -> None:
    pass


@dataclass(frozen=True)
class LoopVariant:
    """One ASGI application driven with ``in_flight`` calls at a time.

    ``folder`` is the function served through ``make_app(...).asgi`` (None:
    the bare ASGI hello world). ``served_gc`` gives it the collector's
    threshold a served worker sets (``SERVER_GC_THRESHOLD``); otherwise
    Python's default stays.
    """

    label: str
    in_flight: int
    folder: Path | None = None
    served_gc: bool = True


LOOP_VARIANTS: dict[str, LoopVariant] = {
    "loop-bare": LoopVariant("bare ASGI hello world (bench/apps/bare_asgi.py)", 16, served_gc=False),
    "loop-hello": LoopVariant("funcwsgi, async hello world, make_app(...).asgi at its defaults", 16, BENCH / "apps" / "hello_async"),
    "loop-io": LoopVariant("funcwsgi, async function awaiting asyncio.sleep(0.005), at its defaults", 400, BENCH / "apps" / "io_async_short"),
    "loop-io-gc700": LoopVariant("the same, under Python's default collector threshold", 400, BENCH / "apps" / "io_async_short", served_gc=False),
}


def served_gc_threshold(service: Any) -> tuple[int, ...]:
    """The collector's thresholds a served worker runs with: ``SERVER_GC_THRESHOLD`` (or the loop's default) applied as at worker start."""
    from funcwsgi.process import gc_threshold, set_gc_threshold

    gc.set_threshold(*PYTHON_GC_THRESHOLD)
    set_gc_threshold(gc_threshold(service))
    return gc.get_threshold()


def loop_app(variant: str) -> tuple[ASGIApp, tuple[int, ...]]:
    """The application of a ``loop-*`` variant, set up as a served worker sets it up, and the collector thresholds it runs with."""
    spec = LOOP_VARIANTS[variant]
    if spec.folder is None:
        from bare_asgi import app as bare_asgi_app

        return bare_asgi_app, PYTHON_GC_THRESHOLD
    from funcwsgi.application import make_app
    from funcwsgi.process import start_process

    service = make_app(environ={"HANDLER_FOLDER": str(spec.folder)})
    app: ASGIApp = service.asgi
    start_process(service)  # the worker's start callbacks, start(), gc.freeze() and the threshold, as before serving
    return app, served_gc_threshold(service) if spec.served_gc else PYTHON_GC_THRESHOLD


async def drive(app: ASGIApp, calls: int, in_flight: int, send: Send = _discard) -> None:
    """``calls`` calls of ``app``, ``in_flight`` at a time, each run as a task of its own."""
    loop = asyncio.get_running_loop()

    async def worker(count: int) -> None:
        for _ in range(count):
            await loop.create_task(app(dict(SCOPE), _receive, send))  # type: ignore[arg-type]

    share, rest = divmod(calls, in_flight)
    await asyncio.gather(*(worker(share + (1 if number < rest else 0)) for number in range(in_flight)))


class Answers:
    """A ``send`` that keeps each call's status and body (told apart by the task sending them), for checking the variants."""

    def __init__(self) -> None:
        self.open: dict[int, tuple[int, bytearray]] = {}
        self.done: dict[str, int] = {}

    async def __call__(self, message: Message) -> None:
        call = id(asyncio.current_task())
        if message["type"] == "http.response.start":
            self.open[call] = (message["status"], bytearray())
        elif message["type"] == "http.response.body":
            status, body = self.open[call]
            body += message.get("body", b"")
            if not message.get("more_body", False):
                del self.open[call]
                answer = f"{status} {bytes(body).decode(errors='replace')}"
                self.done[answer] = self.done.get(answer, 0) + 1


def run_loop(variant: str, calls: int, answers: Answers | None = None) -> dict[str, Any]:
    """The ``--only`` run of a loop variant on one uvloop loop: a warm-up of two calls per call in flight, then ``calls`` calls.

    Returns how it ran (label, calls in flight, the collector's thresholds), for the report.
    """
    import uvloop

    app, threshold = loop_app(variant)
    spec = LOOP_VARIANTS[variant]
    in_flight = spec.in_flight
    gc.set_threshold(*threshold)

    async def main() -> None:
        await drive(app, 2 * in_flight, in_flight)
        # The calls start with the collector's count at zero, as in a worker long past its start: what start-up
        # and the warm-up left uncollected would otherwise bring a collection or two into some runs and not
        # others, and at a threshold of 10,000 one collection (millions of instructions) moves the result.
        gc.collect()
        await drive(app, calls, in_flight, answers or _discard)

    uvloop.run(main())
    return {"label": spec.label, "in_flight": in_flight, "gc_threshold": list(threshold), "loop": f"uvloop {uvloop.__version__}"}


def measure_loop(rounds: int, calls: int) -> list[dict[str, Any]]:
    """Wall and CPU µs per call of each loop variant, interleaved round by round on one loop, each under its own collector thresholds."""
    import uvloop

    apps = [(key, spec, *loop_app(key)) for key, spec in LOOP_VARIANTS.items()]
    wall: dict[str, list[float]] = {key: [] for key, *_ in apps}
    cpu: dict[str, list[float]] = {key: [] for key, *_ in apps}

    async def main() -> None:
        for _key, spec, app, threshold in apps:  # warm-up
            gc.set_threshold(*threshold)
            await drive(app, max(2 * spec.in_flight, calls // 20), spec.in_flight)
        for round_number in range(rounds):
            for key, spec, app, threshold in apps if round_number % 2 == 0 else list(reversed(apps)):
                gc.set_threshold(*threshold)
                gc.collect()  # each round starts without the garbage of the one before
                started, started_cpu = time.perf_counter(), time.process_time()
                await drive(app, calls, spec.in_flight)
                wall[key].append((time.perf_counter() - started) / calls * 1e6)
                cpu[key].append((time.process_time() - started_cpu) / calls * 1e6)

    try:
        uvloop.run(main())
    finally:
        gc.set_threshold(*PYTHON_GC_THRESHOLD)
    return [
        {
            "id": key,
            "label": spec.label,
            "us": round(statistics.median(wall[key]), 3),
            "cpu_us": round(statistics.median(cpu[key]), 3),
            "samples_us": [round(s, 3) for s in wall[key]],
        }
        for key, spec, *_ in apps
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.inprocess", description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--trace-endpoint", help="OTLP/HTTP URL for the tracing-on variant")
    parser.add_argument("--only", help="call one variant --calls times and exit (for callgrind)")
    parser.add_argument("--loop", action="store_true", help="time the event-loop variants (loop-*) too, after the WSGI ones")
    parser.add_argument("--answers", type=Path, help="with --only loop-*: write how many calls got each status and body here (JSON)")
    parser.add_argument("--describe", type=Path, help="with --only loop-*: write how the variant ran (calls in flight, collector thresholds) here (JSON)")
    parser.add_argument("--no-gc", action="store_true", help="with --only (WSGI variants): collect once after the warm-up, then call with the collector off")
    args = parser.parse_args(argv)
    if args.calls < 1:
        parser.error(f"--calls {args.calls}: expected a positive number of calls")
    if (args.answers or args.describe) and args.only not in LOOP_VARIANTS:
        parser.error(f"--answers and --describe need --only with one of {', '.join(LOOP_VARIANTS)}")
    if args.only in LOOP_VARIANTS:
        answers = Answers() if args.answers else None
        described = run_loop(args.only, args.calls, answers)
        if answers is not None:
            args.answers.write_text(json.dumps(answers.done))
        if args.describe:
            args.describe.write_text(json.dumps(described))
        return 0
    if args.only:
        apps = {key: app for key, _, app in variants(args.trace_endpoint, funcwsgi=args.only not in REFERENCES)}
        if args.only not in apps:
            parser.error(f"--only {args.only!r}: expected one of {', '.join([*apps, *LOOP_VARIANTS])}")
        environ = environ_for(args.only)
        call_many(apps[args.only], environ, 50)
        if args.no_gc:
            gc.collect()
            gc.disable()
        call_many(apps[args.only], environ, args.calls)
        flush_spans()
        return 0
    results = measure(args.rounds, args.calls, args.trace_endpoint)
    if args.loop:
        results += measure_loop(args.rounds, args.calls)
    text = json.dumps(results, indent=2)
    if args.json:
        args.json.write_text(text)
    else:
        print(text, file=sys.stderr)  # stdout carries the access logs
    return 0


if __name__ == "__main__":
    sys.exit(main())
