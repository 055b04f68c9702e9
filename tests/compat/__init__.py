"""Functions written for other platforms, as funcwsgi/compat serves them.

The tests of platforms whose contract is HTTP start their servers together (one
per function, configured only by the environment the old platform would set)
and check the responses those platforms gave.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from ..support.ports import free_port
from ..support.processes import GUNICORN, Server, base_env


@contextmanager
def serving(functions: Mapping[str, Mapping[str, str]], command: list[str] | None = None) -> Iterator[dict[str, Server]]:
    """Start one server per entry (name -> settings) at once; stop them all after."""
    servers: dict[str, Server] = {}
    try:
        for name, settings in functions.items():
            port = free_port()  # handed out once: no two servers of the run race for one port
            env = base_env(**{"SERVER_HOST": "127.0.0.1", "SERVER_NUMTHREADS": "4", "SERVER_PORT": str(port), **settings})
            servers[name] = Server(command or GUNICORN, env, port)
        for server in servers.values():
            server.wait_ready()
        yield servers
    finally:
        # Signal every server first, so their graceful shutdowns overlap.
        for server in servers.values():
            if server.process.poll() is None:
                server.signal(signal.SIGTERM)
        for server in servers.values():
            server.stop()
