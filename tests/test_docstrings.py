"""Docstrings name only what exists: every ``:mod:``/``:class:``/... reference to a funcwsgi name, and every
``python -m funcwsgi...`` they give, resolves."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "funcwsgi"
ROLE = re.compile(r":(?:mod|class|func|meth|attr|data|exc):`~?(funcwsgi(?:\.\w+)+)`|``python -m (funcwsgi(?:\.\w+)+)``")


def _references() -> list[tuple[str, str]]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for role, command in ROLE.findall(path.read_text(encoding="utf-8")):
            found.append((str(path.relative_to(PACKAGE.parent)), role or command))
    return found


def _resolves(name: str) -> bool:
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            target: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for part in parts[cut:]:
            if hasattr(target, part):
                target = getattr(target, part)
            elif part in getattr(target, "__annotations__", {}):  # a Protocol's declared attribute
                return part == parts[-1]
            else:
                return False
        return True
    return False


def test_there_are_references_to_check():
    assert len(_references()) > 20


@pytest.mark.parametrize(("where", "name"), _references())
def test_every_reference_in_a_docstring_resolves(where, name):
    """Mutation caught: a docstring naming a module that moved (``funcwsgi.docs_settings``, as config.py did)."""
    assert _resolves(name), f"{where} names {name}, which does not exist"
