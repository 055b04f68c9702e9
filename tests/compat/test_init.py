from __future__ import annotations

import types

import pytest

from funcwsgi.compat import uses_bottle, uses_flask
from funcwsgi.handler.loader import imported_modules


def module_from(tmp_path, source: str) -> types.ModuleType:
    path = tmp_path / "handler.py"
    path.write_text(source)
    module = types.ModuleType("handler")
    module.__file__ = str(path)
    return module


@pytest.mark.parametrize(
    ("source", "flask", "bottle"),
    [
        pytest.param("from flask import request\n", True, False, id="from-flask"),
        pytest.param("import flask.json\n", True, False, id="import-submodule"),
        pytest.param("def main():\n    import flask\n", True, False, id="lazy-import"),
        pytest.param("import functions_framework\n", True, False, id="functions-framework"),
        pytest.param("from bottle import request\n", False, True, id="bottle"),
        pytest.param("import json\nimport sdk\n", False, False, id="neither"),
        pytest.param("from .flask import x\n", False, False, id="relative-is-not-flask"),
        pytest.param("flask = 1\n", False, False, id="a-name-is-not-an-import"),
    ],
)
def test_imports_are_read_from_the_source(tmp_path, source, flask, bottle):
    imports = imported_modules(module_from(tmp_path, source))
    assert uses_flask(imports) is flask
    assert uses_bottle(imports) is bottle


def test_modules_without_a_file_import_nothing():
    assert imported_modules(types.ModuleType("m")) == frozenset()
    assert imported_modules(None) == frozenset()
