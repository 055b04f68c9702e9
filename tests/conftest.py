from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from werkzeug.test import Client

from funcwsgi import make_app

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
