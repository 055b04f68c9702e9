"""A function's own top-level ``adapters`` package is the one it imports, on every HTTP adapter.

funcwsgi's servers live in ``funcwsgi.adapters``; until they did, a function
with a ports-and-adapters layout imported funcwsgi's folder instead of its own.
"""

from __future__ import annotations

import pytest
import requests

from funcwsgi.adapters import HTTP_ADAPTERS

from ..support.paths import function_folder
from ..support.ports import free_port
from ..support.processes import SERVE, Server, base_env


@pytest.mark.parametrize("adapter", HTTP_ADAPTERS)
def test_a_function_imports_its_own_adapters_package(adapter):
    port = free_port()
    env = base_env(SERVER_ADAPTER=adapter, HANDLER_FOLDER=function_folder("own_adapters"), SERVER_HOST="127.0.0.1", SERVER_PORT=str(port))
    server = Server(SERVE, env, port)
    try:
        server.wait_ready()
        answer = requests.get(server.url + "/", timeout=10)
    finally:
        server.stop()
    assert (answer.status_code, answer.text) == (200, "the function's own adapters"), server.stderr[-2000:]
