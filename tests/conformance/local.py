"""Serving the fixture with funcwsgi from this repository, on each installed server adapter."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..servers import BIN, Server, base_env, free_port
from .kit import Runtime, Settings, event_receiver

FIXTURE = Path(__file__).resolve().parent / "fixture"

#: ``gunicorn funcwsgi:app`` next to the repository's gunicorn.conf.py, as a container runs it.
GUNICORN_APP = "gunicorn-app"


def local_targets() -> list[str]:
    """The ways to serve funcwsgi here: gunicorn funcwsgi:app, and every HTTP adapter whose server is installed."""
    targets = [GUNICORN_APP]
    try:
        from adapters import ADAPTERS  # type: ignore[attr-defined]
    except ImportError:
        return targets
    for name, spec in ADAPTERS.items():
        if spec.http and importlib.util.find_spec(spec.server) is not None:
            targets.append(name)
    return targets


@contextmanager
def start_local(target: str, settings: Settings) -> Iterator[Runtime]:
    port, publisher_port = free_port(), free_port()
    env = base_env(
        HANDLER_FOLDER=str(FIXTURE),
        SERVER_HOST="127.0.0.1",
        SERVER_PORT=str(port),
        SERVER_NUMTHREADS="8",
        FUNC_NAME="conformance",
        SERVER_CALL_TIMEOUT=str(settings.call_timeout),
        SERVER_MAX_BODY_SIZE=str(settings.max_body_size),
        PUBLISHER_PROXY_ADDRESS=f"http://127.0.0.1:{publisher_port}/publish",
    )
    if target == GUNICORN_APP:
        command = [str(BIN / "gunicorn"), "funcwsgi:app"]
    else:
        env["SERVER_ADAPTER"] = target
        command = [str(BIN / "funcwsgi"), "serve"]
    received: list[dict[str, object]] = []
    with event_receiver(publisher_port, received):
        server = Server(command, env, port)
        try:
            server.wait_ready()
            yield Runtime(
                server.url, settings, read_log=lambda: server.stdout, publisher_port=publisher_port, received=received
            )
        finally:
            server.stop()
