"""OpenFaaS' python3-http and python3-flask templates: ``function/handler.py`` with ``handle``.

Both templates put the user's code in a ``function/`` package beside the
template's own ``index.py`` and run behind the of-watchdog (``fprocess``,
``mode=http``, ``upstream_url``). The watchdog's variables are the same for
both, so the handler's parameters tell them apart: ``handle(event, context)``
is python3-http (an event with ``body``, ``headers``, ``method``, ``query``,
``path``; a dict result with ``statusCode``, ``body``, ``headers``), and
``handle(req)`` is python3-flask (the body as text, or bytes with
``RAW_BODY=true``). Each template's routes accept only the methods it lists
(docs/migration-openfaas.md).
"""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import json
import os
import socket
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from werkzeug.datastructures import Headers, MultiDict
from werkzeug.http import http_date
from werkzeug.wrappers import Response

from ..handler.signatures import Invoker, Signature
from ..replies import Reply
from ..request import get_or_create_request
from .signals import FUNCTION_PACKAGE as PACKAGE
from .sources import project_root

if TYPE_CHECKING:
    from ..config import Config
    from ..handler.loader import LoadedFunction

#: The methods each template routes; Flask adds HEAD to GET and answers OPTIONS itself.
HTTP_METHODS = frozenset({"GET", "HEAD", "PUT", "POST", "PATCH", "DELETE"})
FLASK_METHODS = frozenset({"GET", "HEAD", "POST"})


def locate(config: Config) -> Config:
    root = project_root(config)
    if os.path.basename(os.path.normpath(root)) == PACKAGE and os.path.isfile(os.path.join(root, "handler.py")):
        folder = root  # already located
    else:
        folder = os.path.join(root, PACKAGE)
    return config.replace(handler_folder=folder, handler_module_name="handler", handler_function_name="handle")


def load(config: Config) -> LoadedFunction:
    """Import ``function.handler`` as the template's ``index.py`` does, so the package's relative imports work."""
    import importlib
    import sys

    from ..errors import LoadError
    from ..handler.loader import HOOK_NAMES, LoadedFunction, checked_hook, imported_modules, load_function, user_traceback
    from ..handler.signatures import detect_signature

    folder = config.handler_folder
    if not os.path.isfile(os.path.join(folder, "__init__.py")):
        return load_function(config)  # not a package: imported as a module of its own
    root = os.path.dirname(folder)
    if root not in sys.path:
        sys.path.insert(0, root)
    path = os.path.join(folder, "handler.py")
    # Another project's function package loaded in this process (tests load several) must not answer for this one.
    for name in [name for name in sys.modules if name == PACKAGE or name.startswith(PACKAGE + ".")]:
        if not os.path.abspath(getattr(sys.modules[name], "__file__", None) or "").startswith(folder + os.sep):
            del sys.modules[name]
    try:
        module = importlib.import_module(f"{PACKAGE}.handler")
    except Exception as error:
        raise LoadError(f"importing {path} raised {type(error).__name__}: {error}", user_traceback(error, path)) from None
    function = getattr(module, "handle", None)
    if not callable(function):
        raise LoadError(f"no function 'handle' in {path}; the python3-http and python3-flask templates call handle")
    return LoadedFunction(
        function=function,
        signature=detect_signature(function, config.handler_signature, where=f"'handle' in {path}"),
        name="handle",
        path=path,
        module=module,
        hooks={hook: checked_hook(module, hook, path) for hook in HOOK_NAMES if hasattr(module, hook)},
        imports=imported_modules(module),
        folder=folder,
    )


@dataclass
class Event:
    """python3-http's ``event``: what its ``index.py`` reads from the Flask request."""

    body: bytes
    headers: Headers
    method: str
    query: MultiDict[str, str]
    path: str


@dataclass
class Context:
    """python3-http's ``context``."""

    hostname: str


METHOD_NOT_ALLOWED = Reply(405, "Method Not Allowed")


def invoker(loaded: LoadedFunction, config: Config, function: Callable[..., Any]) -> Invoker[None]:
    if loaded.signature is Signature.REQ:
        return _flask_template(function, raw_body=config.openfaas_raw_body)
    return _http_template(function)


def _http_template(function: Callable[..., Any]) -> Invoker[None]:
    hostname = os.environ.get("HOSTNAME") or socket.gethostname()
    allowed = ", ".join(sorted(HTTP_METHODS))
    view = flask_view()

    def call(environ: dict[str, Any]) -> tuple[Any, None]:
        if environ.get("REQUEST_METHOD") not in HTTP_METHODS:
            return Reply(405, "Method Not Allowed", headers=[("Allow", allowed)]), None
        request = get_or_create_request(environ)
        event = Event(body=request.get_data(), headers=request.headers, method=request.method, query=request.args, path=request.path)
        return http_response(function(event, Context(hostname)), view), None

    return call


def http_response(result: Any, view: Callable[[Any], Any]) -> Any:
    """What python3-http's ``index.py`` answers for ``handle``'s result (``format_response``, then Flask).

    A ``dict`` (exactly: ``type(result) is dict``) gives ``statusCode``,
    ``headers`` (a dict or a list of pairs) and ``body``; ``None`` is an empty
    ``200``; anything else goes to Flask as a view's return value
    (docs/migration-openfaas.md#what-the-caller-receives).
    """
    if result is None:
        return _view("", 200, None)
    if type(result) is not dict:
        return view(result)
    status = result["statusCode"] if "statusCode" in result else 200
    headers = result["headers"] if "headers" in result else []
    if type(headers) is dict:
        headers = list(headers.items())
    if "body" not in result:
        body: Any = ""
    elif _content_type(result) == "application/octet-stream":
        body = result["body"]  # python3-http-debian's binary rule
    elif type(result["body"]) is dict:
        body = _jsonify(result["body"])
    else:
        body = str(result["body"])
    return _view(body, status, headers)


def _content_type(result: dict[str, Any]) -> str:
    headers = result.get("headers")
    return str(headers.get("Content-type", "")) if isinstance(headers, dict) else ""


class ViewResponse(Response):
    """Flask's response class: ``text/html`` unless the headers name a type."""

    default_mimetype = "text/html"


def _view(body: Any, status: Any, headers: Any) -> Response:
    """Flask's answer to a view's ``(body, status, headers)``.

    A str or bytes body becomes a ``text/html`` response made with the status
    and headers (a name given twice is sent twice); a response (``jsonify``'s)
    gets the status, then each header replaces its namesake.
    """
    if not isinstance(body, Response):
        return ViewResponse(body, status=status, headers=headers or None)
    if status is not None:
        if isinstance(status, (str, bytes, bytearray)):
            body.status = status if isinstance(status, str) else bytes(status).decode("latin-1")
        else:
            body.status_code = status
    if headers:
        body.headers.update(headers)
    return body


def _jsonify(body: dict[str, Any]) -> Response:
    """Flask's ``jsonify`` outside debug mode: keys sorted, compact, a newline after."""
    return ViewResponse(json.dumps(body, default=_json_default, sort_keys=True, separators=(",", ":")) + "\n", mimetype="application/json")


def _json_default(value: Any) -> Any:
    """What Flask's JSON provider makes of the types JSON lacks."""
    if isinstance(value, datetime.date):
        return http_date(value)
    if isinstance(value, (decimal.Decimal, uuid.UUID)):
        return str(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if hasattr(value, "__html__"):
        return str(value.__html__())
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def flask_view() -> Callable[[Any], Any]:
    """Flask's answer to a view's return value (made once); without Flask installed, funcwsgi's own rules."""
    try:
        from .flask import make_flask_app
    except ImportError:
        return lambda result: result
    app = make_flask_app(__name__, os.getcwd())

    def answer(result: Any) -> Any:
        if callable(result) and not isinstance(result, Response):
            return result  # a WSGI app: Flask would call it through the request's environ, as funcwsgi does
        return app.make_response(result)

    return answer


def _flask_template(function: Callable[..., Any], *, raw_body: bool) -> Invoker[None]:
    allowed = ", ".join(sorted(FLASK_METHODS))

    def call(environ: dict[str, Any]) -> tuple[Any, None]:
        if environ.get("REQUEST_METHOD") not in FLASK_METHODS:
            return Reply(405, "Method Not Allowed", headers=[("Allow", allowed)]), None
        request = get_or_create_request(environ)
        body: str | bytes = request.get_data() if raw_body else request.get_data(as_text=True)
        return function(body), None

    return call
