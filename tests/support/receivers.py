"""A real HTTP receiver on 127.0.0.1 that keeps what is POSTed to it, for publishing tests."""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .ports import free_port

#: How often a receiver's serving thread looks for a stop: ``shutdown()`` waits up to this long
#: (http.server's default of 0.5 s, paid once per receiver by every test that stops one).
STOP_POLL_SECONDS = 0.02


class Received:
    def __init__(self, path: str, headers: dict[str, str], body: bytes) -> None:
        self.path = path
        self.headers = headers  # lower-case names
        self.body = body

    def cloud_event(self) -> Any:
        """The event parsed with the cloudevents library (through the runtime's compatibility module)."""
        from funcwsgi.compat.cloudevents_lib import decode

        return decode(self.headers, self.body)


class EventReceiver:
    """Answers ``/ok`` with 202, ``/reject`` with 503 and a body, ``/slow`` after 3 s."""

    def __init__(self) -> None:
        self.received: list[Received] = []
        self._arrived = threading.Condition()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                with receiver._arrived:
                    receiver.received.append(Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                    receiver._arrived.notify_all()
                if self.path == "/slow":
                    time.sleep(3)
                status, answer = (503, b"queue full") if self.path == "/reject" else (202, b"")
                self.send_response(status)
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, args=(STOP_POLL_SECONDS,), daemon=True)
        self.thread.start()

    def wait_for(self, count: int, timeout: float = 10.0) -> list[Received]:
        with self._arrived:
            self._arrived.wait_for(lambda: len(self.received) >= count, timeout)
            return list(self.received)

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
