"""Google's Functions Framework contract: ``hello(request)`` with a ``flask.Request``.

Such a function imports ``functions_framework`` (for its ``@http`` decorator,
which only registers the function) and may call ``flask.jsonify``,
``flask.abort`` or ``flask.make_response``; it runs unchanged inside the same
Flask request context as Kyma python314's functions (:mod:`.flask`). The
framework itself is never imported by the runtime: a function that imports it
lists it in its own requirements.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from . import flask

if TYPE_CHECKING:
    from ..loader import LoadedFunction
    from ..signatures import Invoker


def invoker(loaded: LoadedFunction, function: Callable[..., Any]) -> Invoker[None]:
    """``function(request)`` (or ``function()``) inside a Flask request context."""
    return flask.invoker(loaded, function)
