from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from werkzeug.test import Client

from funcwsgi import make_app

from .receivers import EventReceiver
from .servers import BIN, Server, base_env, free_port

FUNCTIONS = Path(__file__).resolve().parent / "functions"


def function_folder(scenario: str) -> str:
    return str(FUNCTIONS / scenario)


@pytest.fixture
def client_for() -> Callable[..., Client]:
    """A werkzeug test client for the function in ``tests/functions/<scenario>``."""

    def build(scenario: str, *, environ: dict[str, str] | None = None, **overrides: Any) -> Client:
        app = make_app(environ=environ or {}, handler_folder=function_folder(scenario), **overrides)
        return Client(app)

    return build


@pytest.fixture(scope="module")
def collector() -> Iterator[Server]:
    """A real OTLP/HTTP receiver (oteltap) for the module; each span it gets is a JSON line on its stdout."""
    port = free_port()
    tap = Server([str(BIN / "oteltap"), "--port", str(port)], base_env(), port)
    try:
        tap.wait_for_output("Listening")
        yield tap
    finally:
        tap.stop()


@pytest.fixture(scope="module")
def receiver() -> Iterator[EventReceiver]:
    """A real HTTP receiver that keeps what is POSTed to it (a stand-in publisher proxy)."""
    running = EventReceiver()
    yield running
    running.stop()
