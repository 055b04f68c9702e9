"""Google's Functions Framework contract: ``hello(request)`` with a ``flask.Request``.

Such a function imports ``functions_framework`` (for its ``@http`` decorator,
which only registers the function) and may call ``flask.jsonify``,
``flask.abort`` or ``flask.make_response``; it runs unchanged inside the same
Flask request context as Kyma python314's functions (:mod:`.flask`). The
framework itself is never imported by the runtime: a function that imports it
lists it in its own requirements.

The framework's other signature types are served too, as it calls them:
``@functions_framework.cloud_event`` (or ``FUNCTION_SIGNATURE_TYPE=cloudevent``)
functions get the request's CloudEvent, funcwsgi's own type, and the answer
``OK``; ``@functions_framework.typed`` functions get the JSON body through the
input type's ``from_dict`` and answer with ``to_dict()`` as JSON.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from werkzeug.exceptions import BadRequest

from ..errors import LoadError
from ..handler.signatures import Signature
from . import flask

if TYPE_CHECKING:
    from ..handler.loader import LoadedFunction
    from ..handler.signatures import Invoker


def invoker(loaded: LoadedFunction, function: Callable[..., Any], configured: str | None = None) -> Invoker[None]:
    """``function(request)`` (or ``function()``) inside a Flask request context.

    ``configured`` is ``HANDLER_FRAMEWORK_SIGNATURE`` (``FUNCTION_SIGNATURE_TYPE``).
    """
    if loaded.signature is Signature.REQ:
        kind = framework_signature(loaded.function, configured)
        if kind == "typed":
            function = typed_function(function)
        elif kind == "cloudevent":
            function = cloud_event_function(function)
    return flask.invoker(loaded, function)


def framework_signature(function: Callable[..., Any], configured: str | None) -> str:
    """``http``, ``cloudevent`` or ``typed``: how a Functions Framework function is called.

    As the framework decides (``_function_registry.get_func_signature_type``):
    what the function's decorator registered (``@functions_framework.cloud_event``,
    ``@functions_framework.typed``) first, then the setting
    (``FUNCTION_SIGNATURE_TYPE``), else ``http``. The conformance client runs a
    typed function with ``--signature-type http``: the decorator still wins.
    """
    registry = sys.modules.get("functions_framework._function_registry")
    registered = getattr(registry, "REGISTRY_MAP", {}).get(getattr(function, "__name__", None))
    if registered in ("cloudevent", "typed", "http"):
        return str(registered)
    return configured or "http"


def typed_function(function: Callable[..., Any]) -> Callable[[Any], Any]:
    """``@functions_framework.typed``: the JSON body through the input type's ``from_dict``,
    the result through its ``to_dict``, as the framework calls it."""
    registry = sys.modules.get("functions_framework._function_registry")
    input_type = getattr(registry, "INPUT_TYPE_MAP", {}).get(function.__name__)
    if input_type is None or not callable(getattr(input_type, "from_dict", None)):
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

