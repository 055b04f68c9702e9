"""werkzeug's development server: the reloader (SERVER_RELOAD=true) serves an edited function without a
restart, and every call's body is closed, however its client left."""

from __future__ import annotations

import os
import socket
import struct
import time

import requests

from ..support.logs import log_records
from ..support.polling import wait_for
from ..support.ports import free_port
from ..support.processes import SERVE, Server, base_env, start
from ..support.sockets import one_answer


def write(path, text: str) -> None:
    path.write_text(text)
    # Move the modification time forward, so a save within the same clock tick is still seen.
    later = time.time() + 2
    os.utime(path, (later, later))


def serves(url: str, check, timeout: float = 20.0) -> requests.Response:
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            last = requests.get(url, timeout=2)
            if check(last):
                return last
        except requests.RequestException:  # a reload in progress held the call past 2 s, or cut it
            pass
        time.sleep(0.1)
    raise AssertionError(f"not served in {timeout}s; last answer: {last and (last.status_code, last.text)}")


def test_the_reloader_serves_edits_shows_load_errors_and_recovers(tmp_path):
    handler = tmp_path / "handler.py"
    handler.write_text('def main(req, res):\n    return "one"\n')
    port = free_port()
    env = base_env(
        SERVER_ADAPTER="werkzeug", SERVER_RELOAD="true", HANDLER_FOLDER=str(tmp_path), SERVER_HOST="127.0.0.1", SERVER_PORT=str(port)
    )
    server = Server(SERVE, env, port)
    try:
        server.wait_ready()
        assert requests.get(server.url + "/").text == "one"

        write(handler, "def main(req, res):\n    return (\n")
        broken = serves(server.url + "/", lambda r: r.status_code == 500)
        assert "funcwsgi could not load the function" in broken.text
        assert "syntax error in" in broken.text and "handler.py" in broken.text

        write(handler, 'def main(req, res):\n    return "three"\n')
        serves(server.url + "/", lambda r: r.text == "three")
        assert server.process.poll() is None
    finally:
        server.stop()


def test_a_client_that_resets_after_sending_its_next_request_holds_no_stop():
    """werkzeug closes a body only after reading what came past its request; a reset there made that read
    raise and the close was skipped: the call stayed counted in flight, and SIGTERM then waited out the
    whole graceful timeout for it (20 s here; checked with the fix taken out)."""
    with start(SERVE, "req_res", SERVER_ADAPTER="werkzeug", SERVER_ACCESS_LOG="true", SERVER_GRACEFUL_TIMEOUT="20") as server:
        for _ in range(3):
            with socket.create_connection((server.host, server.port), timeout=10) as client:
                assert one_answer(client, b"GET /code HTTP/1.1\r\nHost: t\r\n\r\n").startswith(b"HTTP/1.1 201 ")
                client.sendall(b"GET /code HTTP/1.1\r\nHost: t\r\n\r\n")  # as a keep-alive client does
                time.sleep(0.05)  # the server is reading it
                client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close with a reset

        def calls() -> list[dict]:
            return [record for record in log_records(server.stdout) if record.get("path") == "/code" and "status" in record]

        wait_for(lambda: len(calls()) == 3, 10, "an access record per call", lambda: server.stdout)
        server.signal()
        began = time.monotonic()
        assert server.wait_exit(timeout=40) == 0
        took = time.monotonic() - began
    assert took < 10, f"the stop took {took:.1f} s: a call was still counted in flight"
