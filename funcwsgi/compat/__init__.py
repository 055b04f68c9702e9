"""Other platforms' contracts: which one a function was written for, chosen once at load time.

This package is the one place the core reaches the contracts through; each
contract is one module beside it:

- :mod:`.legacy`: ``main(event, context)`` of Kyma <=3.12 and Kubeless;
- :mod:`.bottle`: bottle's request names in that event, and bottle's own
  request and response for functions that import bottle;
- :mod:`.flask`: Kyma python314's ``flask.request`` inside ``main()``;
- :mod:`.functions_framework`: Google's ``hello(request)`` with a ``flask.Request``;
- :mod:`.cloudevents_lib`: the cloudevents library's events, either generation.

A function written for Flask or for bottle may read ``flask.request`` or
``bottle.request`` and return those frameworks' objects. The runtime gives such
functions the framework's context, and only them: a function that imports
neither costs nothing and never loads the frameworks. A new platform is one new
module here and one branch in :func:`contract_invoker`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..signatures import Invoker, Signature
from .cloudevents_lib import is_cloud_event, to_binary

if TYPE_CHECKING:
    from ..config import Config
    from ..loader import LoadedFunction

__all__ = [
    "contract_invoker",
    "is_cloud_event",
    "to_binary",
    "uses_bottle",
    "uses_flask",
]

#: Modules whose import means the function expects a Flask request context.
FUNCTIONS_FRAMEWORK_MODULES = frozenset({"functions_framework"})
FLASK_MODULES = frozenset({"flask"}) | FUNCTIONS_FRAMEWORK_MODULES
BOTTLE_MODULES = frozenset({"bottle"})

def uses_flask(imports: frozenset[str]) -> bool:
    return not imports.isdisjoint(FLASK_MODULES)


def uses_bottle(imports: frozenset[str]) -> bool:
    return not imports.isdisjoint(BOTTLE_MODULES)


def contract_invoker(loaded: LoadedFunction, config: Config, function: Callable[..., Any]) -> Invoker[None] | None:
    """The invoker of the other platform's contract ``function`` was written for, else ``None``.

    ``None`` means funcwsgi's own contract (``main(req, res)``, ``main(req)``,
    ``main()`` without Flask), which :mod:`funcwsgi.function_app` calls itself.
    """
    signature = loaded.signature
    if signature in (Signature.REQ, Signature.NONE) and uses_flask(loaded.imports):
        if not loaded.imports.isdisjoint(FUNCTIONS_FRAMEWORK_MODULES) or config.handler_framework_signature:
            from . import functions_framework

            return functions_framework.invoker(loaded, function, config.handler_framework_signature)
        from . import flask

        return flask.invoker(loaded, function)
    if signature is Signature.EVENT_CONTEXT:
        from .legacy import event_context_invoker

        call = event_context_invoker(loaded, config, function)
        if uses_bottle(loaded.imports):
            from .bottle import bottle_invoker

            return bottle_invoker(lambda environ: call(environ)[0])
        return call
    return None
