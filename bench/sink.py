"""A stand-in trace collector: accepts OTLP/HTTP exports on 127.0.0.1 and throws them away.

It answers every POST with 200 and an empty protobuf body (an export
response with nothing rejected) and counts what arrived, so a run can show
that spans were really exported. ``GET /stats`` returns the counts as JSON.

    python -m bench.sink PORT
"""

from __future__ import annotations

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Counts:
    lock = threading.Lock()
    exports = 0
    bytes = 0


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:  # noqa: N802 - the name http.server dispatches to
        length = int(self.headers.get("Content-Length") or 0)
        received = len(self.rfile.read(length))
        with Counts.lock:
            Counts.exports += 1
            Counts.bytes += received
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self) -> None:  # noqa: N802
        with Counts.lock:
            body = json.dumps({"exports": Counts.exports, "bytes": Counts.bytes}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


def main() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler)
    server.daemon_threads = True
    server.serve_forever()


if __name__ == "__main__":
    main()
