"""What the checks share: the runtime under test as served, its settings, small HTTP helpers.

Only the standard library, pytest and requests: the kit must run anywhere. A
runtime spoken to over HTTP/2 (a launcher whose protocol is ``h2c``) needs h2
and httpx too (:mod:`.h2c`), imported only then.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import requests

from ..support.logs import log_records
from ..support.polling import wait_for
from ..support.ports import KIT as PORTS
from ..support.processes import Server
from ..support.receivers import STOP_POLL_SECONDS
from .launchers import START_TIMEOUT, Launcher

#: The marker the fixture's /raise puts in its error; it must never reach a client.
SECRET = "conformance-secret-7f3a"
INTERNAL_ERROR = "Internal Server Error"
TIMEOUT_BODY = "Timeout while processing the function"
METRICS = ("function_calls_total", "function_failures_total", "function_duration_seconds")
#: function_duration_seconds' bucket bounds, as funcwsgi declares them (5 ms to Kyma's 180 s call timeout).
BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 180.0, float("inf"))


@dataclass(frozen=True)
class Settings:
    """The settings of the default launch (docs/conformance.md)."""

    call_timeout: float = 2.0
    max_body_size: int = 65536
    func_name: str = "conformance"
    namespace: str = "kit"

    def environment(self, publisher_port: int) -> dict[str, str]:
        return {
            "FUNC_NAME": self.func_name,
            "FUNC_NAMESPACE": self.namespace,
            "SERVER_CALL_TIMEOUT": f"{self.call_timeout:g}",
            "SERVER_MAX_BODY_SIZE": str(self.max_body_size),
            "SERVER_NUMTHREADS": "8",
            "PUBLISHER_PROXY_ADDRESS": f"http://127.0.0.1:{publisher_port}/publish",
        }


@dataclass
class Runtime:
    """A runtime under test, serving one fixture with one set of settings."""

    launcher: Launcher
    process: Server
    fixture: str
    settings: Settings = field(default_factory=Settings)
    publisher_port: int | None = None
    received: list[dict[str, object]] = field(default_factory=list)
    h2c: H2c | None = None

    def __post_init__(self) -> None:
        if self.launcher.protocol == "h2c":
            self.h2c = H2c()

    @property
    def url(self) -> str:
        return self.process.url

    def read_log(self) -> str:
        return self.process.stdout

    def get(self, path: str, **kwargs: object) -> Any:
        return self.request("GET", path, **kwargs)

    def request(self, method: str, path: str, **kwargs: object) -> Any:
        """The answer (a requests or, over h2c, an httpx response: both have what the checks read)."""
        kwargs.setdefault("timeout", 30)
        if self.h2c is not None:
            return self.h2c.request(method, self.url + path, **kwargs)
        return requests.request(method, self.url + path, **kwargs)  # type: ignore[arg-type]

    def close(self) -> None:
        if self.h2c is not None:
            self.h2c.close()

    def module_file(self) -> Path:
        return self.launcher.module_file(self.fixture)

    def wait_for_log(self, text: str, timeout: float = 5.0) -> str:
        wait_for(lambda: text in self.read_log(), timeout, f"{text!r} in the runtime's stdout", self.read_log)
        return self.read_log()

    def log_records(self) -> list[dict[str, object]]:
        """The JSON log records on stdout (the start-up lines are plain text and left out)."""
        return log_records(self.read_log())


#: Idle seconds after which the kit drops a connection it keeps: well within a runtime's keep-alive
#: timeout (30 s by default), so the kit never sends on a connection the runtime is closing.
KEPT_IDLE_SECONDS = 5.0


class H2c:
    """The kit's client of a runtime spoken to over h2c (:mod:`.h2c`).

    The calls of the kit's main thread share one connection, so a run sends
    many streams on it, each a call of its own (its own request id, timeout,
    body limit and count in the metrics: the checks see each). A call from
    another thread (the checks that call several at once) opens a connection
    of its own and closes it after, as requests does: a server may serve the
    streams of one connection one after another (gunicorn does,
    docs/servers.md#http2-on-gunicorn), and the checks ask for calls at once.
    """

    def __init__(self) -> None:
        self.kept: Any = None

    def request(self, method: str, url: str, **kwargs: Any) -> Any:
        if threading.current_thread() is not threading.main_thread():
            return h2c_call(method, url, **kwargs)
        kept = self.kept
        if kept is None or kept.closed or time.monotonic() - kept.used > KEPT_IDLE_SECONDS:
            if kept is not None:
                kept.close()
            self.kept = kept = _connect(url, float(kwargs.get("timeout", 30)))
        return _on(kept, method, url, kwargs)

    def close(self) -> None:
        if self.kept is not None:
            self.kept.close()
            self.kept = None


def _connect(url: str, timeout: float) -> Any:
    from urllib.parse import urlsplit

    from .h2c import H2cConnection

    parts = urlsplit(url)
    return H2cConnection(parts.hostname or "127.0.0.1", parts.port or 80, timeout)


def _on(connection: Any, method: str, url: str, kwargs: dict[str, Any]) -> Any:
    from .h2c import request_arguments

    headers, content, timeout, query = request_arguments(dict(kwargs))
    return connection.request(method, f"{url}{'&' if '?' in url else '?'}{query}" if query else url, headers, content, timeout)


def h2c_call(method: str, url: str, **kwargs: Any) -> Any:
    """One call over h2c on a connection of its own."""
    connection = _connect(url, float(kwargs.get("timeout", 30)))
    try:
        return _on(connection, method, url, kwargs)
    finally:
        connection.close()


def call(launcher: Launcher, method: str, url: str, **kwargs: Any) -> Any:
    """One call on a connection of its own, in the launcher's protocol (requests, or the kit's h2c client)."""
    kwargs.setdefault("timeout", 30)
    if launcher.protocol == "h2c":
        return h2c_call(method, url, **kwargs)
    return requests.request(method, url, **kwargs)


def client_errors(launcher: Launcher) -> tuple[type[Exception], type[Exception]]:
    """The launcher's client's errors: (no connection, or it was lost; no answer in time)."""
    if launcher.protocol == "h2c":
        return ConnectionError, TimeoutError
    return requests.ConnectionError, requests.Timeout


@contextmanager
def serve(launcher: Launcher, fixture: str, settings: Mapping[str, str], base: Settings | None = None) -> Iterator[Runtime]:
    """``launcher`` serving ``fixture`` with the default settings plus ``settings``, and a publisher stand-in."""
    base = base or Settings()
    publisher_port = PORTS.take()
    received: list[dict[str, object]] = []
    with event_receiver(publisher_port, received):
        process = launcher.start(fixture, {**base.environment(publisher_port), **settings})
        runtime = Runtime(launcher, process, fixture, base, publisher_port, received)
        try:
            yield runtime
        finally:
            runtime.close()
            process.stop()


@contextmanager
def serve_many(launcher: Launcher, launches: Mapping[str, tuple[str, Mapping[str, str]]]) -> Iterator[dict[str, Runtime]]:
    """Several launches of ``launcher`` at once (name: (fixture, settings)), started side by side."""
    base = Settings()
    with ExitStack() as stack:
        started: dict[str, Runtime] = {}
        for key, (fixture, settings) in launches.items():
            publisher_port = PORTS.take()
            received: list[dict[str, object]] = []
            stack.enter_context(event_receiver(publisher_port, received))
            process = launcher.start(fixture, {**base.environment(publisher_port), **settings}, wait=False)
            stack.callback(process.stop)
            started[key] = Runtime(launcher, process, fixture, base, publisher_port, received)
            stack.callback(started[key].close)
        # Registered last, so run first: every SIGTERM goes out before the waits for each exit.
        stack.callback(lambda: [running.process.begin_stop() for running in started.values()])
        for running in started.values():
            running.process.wait_ready(timeout=START_TIMEOUT)
        yield started


class _Receiver(BaseHTTPRequestHandler):
    events: list[dict[str, object]]
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:  # noqa: N802 - http.server's spelling
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        self.events.append({"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}, "body": body})
        self.send_response(202)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass


@contextmanager
def event_receiver(port: int, events: list[dict[str, object]]) -> Iterator[None]:
    """An HTTP endpoint on 127.0.0.1:port keeping what is posted to it: a publisher proxy or an OTLP collector."""
    handler = type("Receiver", (_Receiver,), {"events": events})
    server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    thread = threading.Thread(target=server.serve_forever, args=(STOP_POLL_SECONDS,), daemon=True)
    thread.start()
    try:
        yield
    finally:
        server.shutdown()
        server.server_close()


def structured(event: dict[str, object]) -> dict[str, object]:
    """A received structured-mode event as a dict (attributes and data)."""
    return json.loads(event["body"])  # type: ignore[arg-type]


def main_line(exited_stderr: str) -> str:
    """The one start-up error line of a failed launch, or an assertion naming what was printed."""
    lines = [line for line in exited_stderr.splitlines() if re.match(r"^\S+: error: ", line)]
    assert len(lines) == 1, f"expected exactly one '<program>: error: ...' line on stderr, got:\n{exited_stderr[-3000:]}"
    return lines[0]
