"""SERVER_DEBUG_PORT: a Debug Adapter Protocol client gets debugpy's answer to ``initialize`` while the function serves.

On every HTTP adapter: the serving process opens the port (debugpy's adapter
answers there), and calls are served while a client is attached.
"""

from __future__ import annotations

import socket

import pytest
import requests

from funcwsgi.adapters import HTTP_ADAPTERS
from funcwsgi.config import Config
from funcwsgi.errors import ConfigError

from ..support.dap import DapClient
from ..support.paths import function_folder
from ..support.ports import free_port
from ..support.processes import SERVE, Server, base_env, run_to_exit


@pytest.mark.parametrize("adapter", HTTP_ADAPTERS)
def test_a_debug_adapter_client_is_answered_while_the_function_serves(adapter):
    port, debug_port = free_port(), free_port()
    env = base_env(
        SERVER_ADAPTER=adapter, HANDLER_FOLDER=function_folder("observed"), SERVER_HOST="127.0.0.1", SERVER_PORT=str(port),
        SERVER_DEBUG_PORT=str(debug_port),
    )
    server = Server(SERVE, env, port)
    try:
        server.wait_ready()
        # The line comes once debugpy listens; no probe before it, as debugpy's adapter takes one client.
        listening = server.wait_for_output(f"Debugger (debugpy) listening on 127.0.0.1:{debug_port}")
        client = DapClient(debug_port)
        try:
            answer = client.request("initialize", {"clientID": "funcwsgi-tests", "adapterID": "debugpy", "linesStartAt1": True})
            assert answer["success"] is True and answer["command"] == "initialize", answer
            assert answer["body"]["supportsConfigurationDoneRequest"] is True
            # Attached, not paused: the function goes on answering, in the process the debugger is in.
            pid = requests.get(server.url + "/pid", timeout=10).text
            assert f"listening on 127.0.0.1:{debug_port}, pid {pid}:" in listening
        finally:
            client.close()
        assert "open beyond this machine" not in server.stdout
    finally:
        server.stop()


def test_the_debug_port_is_off_by_default_and_on_loopback():
    config = Config.from_env({})
    assert (config.server_debug_port, config.server_debug_host) == (0, "127.0.0.1")


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"SERVER_DEBUG_PORT": "8080"}, "SERVER_DEBUG_PORT=8080 is refused: the server already listens there"),
        ({"SERVER_DEBUG_PORT": "5678", "SERVER_WORKERS": "2"}, "SERVER_DEBUG_PORT=5678 is refused with SERVER_WORKERS=2"),
        ({"SERVER_DEBUG_PORT": "debug"}, "SERVER_DEBUG_PORT='debug' is invalid: expected 0 or an integer from 1 to 65535"),
        ({"SERVER_DEBUG_HOST": "localhost"}, "SERVER_DEBUG_HOST='localhost' is invalid: expected an IP address"),
    ],
)
def test_bad_debug_settings_are_one_line(settings, message):
    with pytest.raises(ConfigError, match=message):
        Config.from_env(settings)


def test_another_host_than_loopback_is_warned_about():
    port, debug_port = free_port(), free_port()
    env = base_env(
        HANDLER_FOLDER=function_folder("hello"), SERVER_HOST="127.0.0.1", SERVER_PORT=str(port),
        SERVER_DEBUG_PORT=str(debug_port), SERVER_DEBUG_HOST="0.0.0.0",
    )
    server = Server(SERVE, env, port)
    try:
        server.wait_ready()
        warning = server.wait_for_output("open beyond this machine")
        assert f"SERVER_DEBUG_HOST=0.0.0.0: the debugger port {debug_port} is open beyond this machine" in warning
    finally:
        server.stop()


def test_a_taken_debug_port_stops_start_up_with_one_line():
    port = free_port()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        debug_port = taken.getsockname()[1]
        env = base_env(HANDLER_FOLDER=function_folder("hello"), SERVER_HOST="127.0.0.1", SERVER_PORT=str(port), SERVER_DEBUG_PORT=str(debug_port))
        result = run_to_exit(SERVE, env, timeout=60)
    assert result.returncode != 0
    assert f"cannot listen for a debugger on SERVER_DEBUG_HOST='127.0.0.1' SERVER_DEBUG_PORT={debug_port}" in result.stderr, result.stderr[-2000:]
