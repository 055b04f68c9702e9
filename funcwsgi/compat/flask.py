"""Calling a Flask-style function inside a Flask request context (``funcwsgi[flask]``).

Kyma python314 functions read ``flask.request`` in ``main()``; Functions
Framework functions take a ``flask.Request`` in ``hello(request)`` and may call
``flask.jsonify``, ``flask.abort`` or ``flask.make_response``. Both run here
inside a request context of one Flask app made at start-up, and the request
they see is a real ``flask.Request``: the very object ``sdk.get_request()``
returns, so what one reads (the body included) the other sees too.

Imported only for functions whose module imports Flask.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

import flask
from flask.ctx import RequestContext

from ..handler.signatures import Invoker, Signature
from ..request import FunctionRequest

if TYPE_CHECKING:
    from ..handler.loader import LoadedFunction


class FlaskFunctionRequest(FunctionRequest, flask.Request):
    """A request that is both the runtime's request and a ``flask.Request``."""


def flask_request(environ: dict[str, Any]) -> FlaskFunctionRequest:
    """The call's request as a ``flask.Request``, keeping what outer layers parsed.

    An outer layer (CloudEvents decoding, say) may already have made the call's
    request and read its body; that object becomes the Flask request in place,
    so the body is read once and every reader shares it.
    """
    request = environ.get("werkzeug.request")
    if isinstance(request, FlaskFunctionRequest):
        return request
    if isinstance(request, FunctionRequest):
        request.__class__ = FlaskFunctionRequest
        return cast(FlaskFunctionRequest, request)  # it is one now
    return FlaskFunctionRequest(environ)


class FunctionFlask(flask.Flask):
    """A Flask app that routes nothing: the runtime has already chosen the function.

    Without a URL adapter, pushing a context skips binding and matching a URL
    map, a third of what a Flask context costs per call. ``url_for`` has no
    routes to build here anyway.
    """

    def create_url_adapter(self, request: flask.Request | None) -> None:
        return None


def invoker(loaded: LoadedFunction, function: Callable[..., Any]) -> Invoker[None]:
    """Kyma python314's contract: ``main()`` (or ``main(request)``) inside a Flask request context."""
    app = make_flask_app(loaded.module.__name__ if loaded.module else loaded.name, loaded.folder)
    return flask_invoker(function, pass_request=loaded.signature is Signature.REQ, app=app)


def make_flask_app(name: str, folder: str) -> flask.Flask:
    # No static route: a function serves no files.
    return FunctionFlask(name, root_path=folder, static_folder=None)


def flask_invoker(function: Callable[..., Any], *, pass_request: bool, app: flask.Flask) -> Invoker[None]:
    """Call ``function()`` (or ``function(request)``) inside a request context of ``app``."""
    json_provider = app.json

    if pass_request:

        def call_with_request(environ: dict[str, Any]) -> tuple[Any, None]:
            request = flask_request(environ)
            request.json_module = json_provider  # type: ignore[assignment]  # typed as the json module; Flask's provider serves  # typed as the json module; Flask's provider serves
            with RequestContext(app, environ, request=request):
                return function(request), None

        return call_with_request

    def call(environ: dict[str, Any]) -> tuple[Any, None]:
        request = flask_request(environ)
        request.json_module = json_provider  # type: ignore[assignment]
        with RequestContext(app, environ, request=request):
            return function(), None

    return call
