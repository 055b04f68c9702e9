"""werkzeug's reloader (SERVER_RELOAD=true): an edited function is served without a restart."""

from __future__ import annotations

import os
import time

import requests

from ..support.ports import free_port
from ..support.processes import SERVE, Server, base_env


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
