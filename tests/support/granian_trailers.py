"""Reproduction for granian: an HTTP/2 request whose trailers hold a pseudo-header field is served.

RFC 9113 section 8.1: "Pseudo-header fields MUST NOT appear in a trailer section" and such a request
is malformed (section 8.1.1: the server treats it as a stream error of type PROTOCOL_ERROR). granian
(2.8.9 here) answers it 200 with the application's whole answer, and the application is never shown
the trailers, so it cannot refuse it itself. Stand-alone: it needs only granian and the h2 package's
``hyperframe`` and ``hpack``, and starts bare granian (no framework) with HTTP/2 on::

    pip install granian h2
    python granian_trailers.py            # exit 1: reproduced; exit 0: every case refused

Each case opens one h2c connection (prior knowledge), sends HEADERS (POST /, no END_STREAM), one DATA
frame (``abcd``) and, at once or half a second later, a HEADERS frame with END_STREAM holding the
trailer ``:path: /elsewhere``; then it reads until the stream ends or is reset, or the connection
closes. Both of granian's interfaces are tried: WSGI and ASGI.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import hpack
from hyperframe.frame import DataFrame, Frame, GoAwayFrame, HeadersFrame, RstStreamFrame, SettingsFrame

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
PROTOCOL_ERROR = 0x1
#: (interface, seconds between the body and the trailers)
CASES = [("wsgi", 0.0), ("wsgi", 0.5), ("asgi", 0.0), ("asgi", 0.5)]


# -- the application: says what it was called with ------------------------------------------------


def app(environ, start_response):  # the WSGI application granian serves
    body = environ["wsgi.input"].read()
    seen = json.dumps({"path": environ["PATH_INFO"], "body": body.decode("latin-1")}).encode()
    start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(seen)))])
    return [seen]


async def asgi_app(scope, receive, send):  # the same as an ASGI application
    if scope["type"] != "http":
        return
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    seen = json.dumps({"path": scope["path"], "body": body.decode("latin-1")}).encode()
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": seen})


# -- the client: frames written one by one ---------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_granian(interface: str, port: int) -> subprocess.Popen[bytes]:
    target = f"{Path(__file__).stem}:{'app' if interface == 'wsgi' else 'asgi_app'}"
    command = [sys.executable, "-m", "granian", "--interface", interface, "--http", "2", "--host", "127.0.0.1", "--port", str(port), "--workers", "1", target]
    server = subprocess.Popen(command, cwd=Path(__file__).parent, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return server
        except OSError:
            time.sleep(0.05)
    server.kill()
    raise SystemExit(f"granian did not listen on 127.0.0.1:{port} within 20 s")


def frames_in(buffer: bytes) -> tuple[list[Frame], bytes]:
    found = []
    while len(buffer) >= 9:
        frame, length = Frame.parse_frame_header(memoryview(buffer[:9]))
        if len(buffer) < 9 + length:
            break
        frame.parse_body(memoryview(buffer[9 : 9 + length]))
        found.append(frame)
        buffer = buffer[9 + length :]
    return found, buffer


def send_request(port: int, pause: float) -> dict[str, object]:
    """What came back for the malformed request: its status, body, or the reset or GOAWAY that ended it."""
    encoder, decoder = hpack.Encoder(), hpack.Decoder()
    fields = [(":method", "POST"), (":scheme", "http"), (":path", "/"), (":authority", "localhost")]
    headers = HeadersFrame(1, encoder.encode(fields))
    headers.flags.add("END_HEADERS")
    trailers = HeadersFrame(1, encoder.encode([(":path", "/elsewhere")]))
    trailers.flags.add("END_HEADERS")
    trailers.flags.add("END_STREAM")
    outcome: dict[str, object] = {"status": None, "body": b"", "reset": None, "goaway": None}
    buffer = b""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as client:
        client.sendall(PREFACE + SettingsFrame(0).serialize() + headers.serialize() + DataFrame(1, b"abcd").serialize())
        sent_trailers_at = time.monotonic() + pause
        deadline = time.monotonic() + 5 + pause
        trailers_sent = False
        while time.monotonic() < deadline:
            if not trailers_sent and time.monotonic() >= sent_trailers_at:
                client.sendall(trailers.serialize())
                trailers_sent = True
            client.settimeout(0.05)
            try:
                chunk = client.recv(65536)
            except TimeoutError:
                continue
            if not chunk:
                break
            frames, buffer = frames_in(buffer + chunk)
            for frame in frames:
                if isinstance(frame, SettingsFrame) and "ACK" not in frame.flags:
                    client.sendall(SettingsFrame(0, flags=["ACK"]).serialize())
                elif isinstance(frame, HeadersFrame) and frame.stream_id == 1:
                    outcome["status"] = int(dict(decoder.decode(frame.data))[":status"])
                elif isinstance(frame, DataFrame) and frame.stream_id == 1:
                    outcome["body"] = outcome["body"] + frame.data  # type: ignore[operator]
                elif isinstance(frame, RstStreamFrame) and frame.stream_id == 1:
                    outcome["reset"] = frame.error_code
                elif isinstance(frame, GoAwayFrame):
                    outcome["goaway"] = frame.error_code
                if (isinstance(frame, (HeadersFrame, DataFrame)) and frame.stream_id == 1 and "END_STREAM" in frame.flags) or isinstance(frame, (RstStreamFrame, GoAwayFrame)):
                    deadline = 0
    return outcome


def main() -> int:
    import granian

    print(f"granian {granian.__version__}, Python {sys.version.split()[0]}")
    reproduced = 0
    for interface, pause in CASES:
        port = free_port()
        server = start_granian(interface, port)
        try:
            outcome = send_request(port, pause)
        finally:
            os.killpg(server.pid, 15)
            server.wait(10)
        when = f"{pause:.1f} s after the body" if pause else "right after the body"
        refused = outcome["reset"] == PROTOCOL_ERROR or outcome["goaway"] == PROTOCOL_ERROR or outcome["status"] == 400
        reproduced += not refused
        print(
            f"{interface}, trailers {when}: "
            f"status {outcome['status']}, body {bytes(outcome['body']).decode('latin-1')!r}, "  # type: ignore[arg-type]
            f"RST_STREAM {outcome['reset']}, GOAWAY {outcome['goaway']}: {'refused' if refused else 'SERVED (expected PROTOCOL_ERROR)'}"
        )
    return 1 if reproduced else 0


if __name__ == "__main__":
    sys.exit(main())
