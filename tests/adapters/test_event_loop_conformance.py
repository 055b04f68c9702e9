"""The conformance kit, unchanged, against the event-loop path: its own process, pointed with ``--runtime-url``.

The runtime serves the kit's fixture written ``async def``
(tests/functions/conformance_async) with the kit's documented settings, on
each loop server; the kit runs every check over HTTP as it would against
any other runtime.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from ..conftest import function_folder
from ..servers import BIN, REPO, Server, base_env, free_port

# The kit's documented settings (docs/conformance.md), the ones it assumes by default.
CALL_TIMEOUT = "2"
MAX_BODY_SIZE = "65536"
SERVED = {"gunicorn": [str(BIN / "funcwsgi"), "serve"], "granian": [str(BIN / "funcwsgi"), "serve"], "gunicorn-app": [str(BIN / "gunicorn"), "funcwsgi:app"]}


@pytest.mark.parametrize("served", list(SERVED))
def test_the_conformance_kit_passes_on_the_event_loop(served, tmp_path):
    port, publisher_port = free_port(), free_port()
    env = base_env(
        HANDLER_FOLDER=function_folder("conformance_async"),
        SERVER_HOST="127.0.0.1",
        SERVER_PORT=str(port),
        FUNC_NAME="conformance",
        SERVER_CALL_TIMEOUT=CALL_TIMEOUT,
        SERVER_MAX_BODY_SIZE=MAX_BODY_SIZE,
        PUBLISHER_PROXY_ADDRESS=f"http://127.0.0.1:{publisher_port}/publish",
    )
    if served != "gunicorn-app":
        env["SERVER_ADAPTER"] = served
    server = Server(SERVED[served], env, port, cwd=REPO)
    try:
        server.wait_ready()
        log = tmp_path / "runtime.log"
        # The kit reads the runtime's log from a file: the server's stdout file, as it grows.
        log.symlink_to(server._out.name)
        kit = subprocess.run(
            [
                sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/conformance",
                "--runtime-url", server.url, "--runtime-log", str(log), "--publisher-port", str(publisher_port),
            ],
            cwd=REPO, env=base_env(), capture_output=True, text=True, timeout=600,
        )
        assert kit.returncode == 0, kit.stdout[-4000:] + kit.stderr[-2000:]
        assert " passed" in kit.stdout and " failed" not in kit.stdout
        assert "Using worker: adapters._event_loop_worker.EventLoopWorker" in server.stdout + server.stderr or served == "granian"
    finally:
        server.stop()
