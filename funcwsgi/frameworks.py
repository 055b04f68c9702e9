"""Which web frameworks a function's module imports, learnt once at load time.

A function written for Flask (Kyma python314, Google's Functions Framework) or
for bottle (Kubeless, Kyma <=3.12) may read ``flask.request`` or
``bottle.request`` and return those frameworks' objects. The runtime gives such
functions the framework's context, and only them: a function that imports
neither costs nothing and never loads the frameworks.
"""

from __future__ import annotations

import ast
from types import ModuleType

#: Modules whose import means the function expects a Flask request context.
FLASK_MODULES = frozenset({"flask", "functions_framework"})
BOTTLE_MODULES = frozenset({"bottle"})

#: The extra that installs a framework, for the message when it is missing.
EXTRAS = {"flask": "funcwsgi[flask]", "functions_framework": "functions-framework"}


def imported_modules(module: ModuleType | None) -> frozenset[str]:
    """Top-level names of the modules ``module``'s source imports anywhere in it."""
    path = getattr(module, "__file__", None)
    if not path:
        return frozenset()
    try:
        with open(path, "rb") as handle:
            tree = ast.parse(handle.read(), path)
    except (OSError, SyntaxError, ValueError):
        return frozenset()
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".", 1)[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".", 1)[0])
    return frozenset(names)


def uses_flask(imports: frozenset[str]) -> bool:
    return not imports.isdisjoint(FLASK_MODULES)


def uses_bottle(imports: frozenset[str]) -> bool:
    return not imports.isdisjoint(BOTTLE_MODULES)
