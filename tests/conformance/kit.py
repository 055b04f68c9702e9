"""What the checks share: the runtime under test as served, its settings, small HTTP helpers.

Only the standard library, pytest and requests: the kit must run anywhere.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import requests

from .launchers import Launcher, Running, free_port

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
    process: Running
    fixture: str
    settings: Settings = field(default_factory=Settings)
    publisher_port: int | None = None
    received: list[dict[str, object]] = field(default_factory=list)

    @property
    def url(self) -> str:
        return self.process.url

    def read_log(self) -> str:
        return self.process.stdout

    def get(self, path: str, **kwargs: object) -> requests.Response:
        return self.request("GET", path, **kwargs)

    def request(self, method: str, path: str, **kwargs: object) -> requests.Response:
        kwargs.setdefault("timeout", 30)
        return requests.request(method, self.url + path, **kwargs)  # type: ignore[arg-type]

    def module_file(self) -> Path:
        return self.launcher.module_file(self.fixture)

    def wait_for_log(self, text: str, timeout: float = 5.0) -> str:
        return wait_for(lambda: text in self.read_log(), timeout, f"{text!r} in the runtime's stdout", lambda: self.read_log())

    def log_records(self) -> list[dict[str, object]]:
        """The JSON log records on stdout (the start-up lines are plain text and left out)."""
        records = []
        for line in self.read_log().splitlines():
            if line.startswith("{"):
                try:
                    records.append(json.loads(line))
                except ValueError:
                    continue
        return records


def wait_for(predicate: Callable[[], bool], timeout: float, what: str, show: Callable[[], str] | None = None) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return show() if show else ""
        time.sleep(0.02)
    detail = f"\n{show()[-3000:]}" if show else ""
    raise AssertionError(f"{what}: not seen within {timeout:g} s{detail}")


@contextmanager
def serve(launcher: Launcher, fixture: str, settings: Mapping[str, str], base: Settings | None = None) -> Iterator[Runtime]:
    """``launcher`` serving ``fixture`` with the default settings plus ``settings``, and a publisher stand-in."""
    base = base or Settings()
    publisher_port = free_port()
    received: list[dict[str, object]] = []
    with event_receiver(publisher_port, received):
        process = launcher.start(fixture, {**base.environment(publisher_port), **settings})
        try:
            yield Runtime(launcher, process, fixture, base, publisher_port, received)
        finally:
            process.stop()


@contextmanager
def serve_many(launcher: Launcher, launches: Mapping[str, tuple[str, Mapping[str, str]]]) -> Iterator[dict[str, Runtime]]:
    """Several launches of ``launcher`` at once (name: (fixture, settings)), started side by side."""
    base = Settings()
    with ExitStack() as stack:
        started: dict[str, Runtime] = {}
        for key, (fixture, settings) in launches.items():
            publisher_port = free_port()
            received: list[dict[str, object]] = []
            stack.enter_context(event_receiver(publisher_port, received))
            process = launcher.start(fixture, {**base.environment(publisher_port), **settings}, wait=False)
            stack.callback(process.stop)
            started[key] = Runtime(launcher, process, fixture, base, publisher_port, received)
        # Registered last, so run first: every SIGTERM goes out before the waits for each exit.
        stack.callback(lambda: [running.process.begin_stop() for running in started.values()])
        for running in started.values():
            running.process.wait_ready()
        yield started


def metric_total(text: str, name: str, **labels: str) -> float:
    """The sum of the samples of ``name`` whose labels include ``labels``."""
    total = 0.0
    for found, value in samples(text, name):
        if all(found.get(k) == v for k, v in labels.items()):
            total += value
    return total


def samples(text: str, name: str) -> list[tuple[dict[str, str], float]]:
    """Every sample of ``name`` in a Prometheus text exposition: (labels, value)."""
    pattern = re.compile(rf"^{re.escape(name)}(\{{[^}}]*\}})?\s+(\S+)", re.M)
    return [(dict(re.findall(r'(\w+)="([^"]*)"', match.group(1) or "")), float(match.group(2))) for match in pattern.finditer(text)]


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
    thread = threading.Thread(target=server.serve_forever, daemon=True)
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
