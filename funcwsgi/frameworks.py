"""Which web frameworks a function's module imports, learnt once at load time.

A function written for Flask (Kyma python314, Google's Functions Framework) or
for bottle (Kubeless, Kyma <=3.12) may read ``flask.request`` or
``bottle.request`` and return those frameworks' objects. The runtime gives such
functions the framework's context, and only them: a function that imports
neither costs nothing and never loads the frameworks.
"""

from __future__ import annotations

import ast
import json
import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any

from werkzeug.exceptions import BadRequest

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


def framework_signature(function: Callable[..., Any], configured: str | None) -> str:
    """``http``, ``cloudevent`` or ``typed``: how a Functions Framework function is called.

    The setting wins; else what the function's decorator registered
    (``@functions_framework.cloud_event``, ``@functions_framework.typed``),
    as the framework itself decides.
    """
    if configured:
        return configured
    registry = sys.modules.get("functions_framework._function_registry")
    kind = getattr(registry, "REGISTRY_MAP", {}).get(getattr(function, "__name__", None))
    return kind if kind in ("cloudevent", "typed") else "http"


def typed_function(function: Callable[..., Any]) -> Callable[[Any], Any]:
    """``@functions_framework.typed``: the JSON body through the input type's ``from_dict``,
    the result through its ``to_dict``, as the framework calls it."""
    registry = sys.modules.get("functions_framework._function_registry")
    input_type = getattr(registry, "INPUT_TYPE_MAP", {}).get(function.__name__)
    if input_type is None or not callable(getattr(input_type, "from_dict", None)):
        from .errors import LoadError

        raise LoadError(
            f"the typed function {function.__name__!r} has no input type with a from_dict method "
            "(expected @functions_framework.typed(InputType) or an annotated parameter)"
        )

    def call_typed(request: Any) -> Any:
        result = function(input_type.from_dict(request.get_json()))
        if result is None:
            return "", 200
        if type(result).__module__ == "builtins":
            return result
        to_dict = getattr(result, "to_dict", None)
        if not callable(to_dict):
            raise TypeError(f"the typed function returned a {type(result).__name__}, which has no to_dict method")
        # The framework sends json.dumps(to_dict()) as text/html; the same bytes go out as JSON here.
        return json.dumps(to_dict()).encode(), {"Content-Type": "application/json"}

    call_typed.__name__ = function.__name__
    return call_typed


def cloud_event_function(function: Callable[..., Any]) -> Callable[[Any], Any]:
    """``@functions_framework.cloud_event``: called with the request's CloudEvent, answered ``OK``."""

    def call_with_event(request: Any) -> Any:
        event = request.cloud_event
        if event is None:
            raise BadRequest("expected a CloudEvent (ce-* headers or application/cloudevents+json)")
        function(event)
        return "OK"

    call_with_event.__name__ = function.__name__
    return call_with_event
