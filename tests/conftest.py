from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from werkzeug.test import Client

from funcwsgi import make_app

from . import calibration
from .receivers import EventReceiver
from .servers import BIN, Server, base_env, free_port

FUNCTIONS = Path(__file__).resolve().parent / "functions"


def function_folder(scenario: str) -> str:
    return str(FUNCTIONS / scenario)


@pytest.fixture(scope="session")
def session_calibration() -> calibration.Calibration:
    """This machine's speed and load at the start of the session (tests/calibration.py)."""
    return calibration.measure()


@pytest.fixture
def timing(session_calibration: calibration.Calibration) -> calibration.Calibration:
    """The calibration for a timing bound: the session's, or a quick new measure if the machine got busier since."""
    now = calibration.measure(repeats=3, count=300_000)
    return now if now.factor > session_calibration.factor else session_calibration


def pytest_report_header(config: pytest.Config) -> str:
    return f"machine calibration: {calibration.measure()}"


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
