"""What the checks share: the runtime under test, its settings, small HTTP helpers.

Only the standard library, pytest and requests: the kit must run anywhere.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import requests

#: The marker the fixture's /raise puts in its exception; it must never reach a client.
SECRET = "conformance-secret-7f3a"
INTERNAL_ERROR = "Internal Server Error"
TIMEOUT_BODY = "Timeout while processing the function"
METRICS = ("function_calls_total", "function_failures_total", "function_duration_seconds")


@dataclass(frozen=True)
class Settings:
    """The settings the runtime under test was started with (docs/conformance.md)."""

    call_timeout: float = 2.0
    max_body_size: int = 65536


@dataclass
class Runtime:
    url: str
    settings: Settings
    read_log: Callable[[], str] | None = None
    publisher_port: int | None = None
    received: list[dict[str, object]] = field(default_factory=list)

    def get(self, path: str, **kwargs: object) -> requests.Response:
        return requests.get(self.url + path, timeout=30, **kwargs)  # type: ignore[arg-type]

    def request(self, method: str, path: str, **kwargs: object) -> requests.Response:
        return requests.request(method, self.url + path, timeout=30, **kwargs)  # type: ignore[arg-type]


def metric_total(text: str, name: str, **labels: str) -> float:
    """The sum of the samples of ``name`` whose labels include ``labels``."""
    total = 0.0
    pattern = re.compile(rf"^{re.escape(name)}(\{{[^}}]*\}})?\s+(\S+)", re.M)
    for match in pattern.finditer(text):
        found = dict(re.findall(r'(\w+)="([^"]*)"', match.group(1) or ""))
        if all(found.get(k) == v for k, v in labels.items()):
            total += float(match.group(2))
    return total


class _Receiver(BaseHTTPRequestHandler):
    events: list[dict[str, object]]

    def do_POST(self) -> None:  # noqa: N802 - http.server's spelling
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        self.events.append({"headers": {k.lower(): v for k, v in self.headers.items()}, "body": body})
        self.send_response(202)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass


@contextmanager
def event_receiver(port: int, events: list[dict[str, object]]) -> Iterator[None]:
    """An HTTP endpoint on 127.0.0.1:port keeping what is posted to it, standing in for a publisher proxy."""
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
