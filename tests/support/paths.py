"""Where things are: the repository, the virtualenv's programs, the user-function fixtures."""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
#: The programs of the virtualenv the tests run in (gunicorn, funcwsgi, oteltap, ...).
BIN = Path(sys.executable).parent
#: The user functions the tests serve: one real folder per scenario (tests/functions/<scenario>/).
FUNCTIONS = REPO / "tests" / "functions"


def function_folder(scenario: str) -> str:
    return str(FUNCTIONS / scenario)
