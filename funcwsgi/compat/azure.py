"""Azure Functions' Python HTTP trigger: the v1 (``*/function.json``) and v2 (``function_app.py``) models.

An app is a folder with ``host.json`` (the host's settings: ``routePrefix``,
default ``api``) and either ``function_app.py`` holding a
``func.FunctionApp()`` whose ``@app.route`` functions (blueprints included)
are the functions, or one folder per function with a ``function.json`` naming
its ``scriptFile``, ``entryPoint`` and HTTP trigger (``route``, ``methods``).
Several functions are served by one runtime, routed as the host routes them:
route templates with constraints (``{id:int}``, ``{name?}``, ``{*rest}``),
literal segments before parameters, methods checked. Each call is an
``azure.functions.HttpRequest``; an ``HttpResponse`` (or a ``str``) comes back.
Those are the ``azure-functions`` library's own types (``funcwsgi[azure]``)
(docs/migration-azure.md).
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
import re
import sys
import types
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl

from werkzeug.wrappers import Response

from ..errors import LoadError
from ..handler.signatures import Invoker, Signature
from ..replies import Reply
from ..request import read_body
from .signals import entries as _entries
from .sources import project_root
from .wsgi_text import utf8

if TYPE_CHECKING:
    from ..config import Config
    from ..handler.loader import LoadedFunction

NOT_FOUND = Reply(404)
#: The host's answer when the function set no HTTP output (FunctionInvocationMiddleware's OkResult).
NO_OUTPUT = Reply(200, "")
RETURN = "$return"
DEFAULT_ROUTE_PREFIX = "api"
APP_PACKAGE = "__app__"
ALL_METHODS = frozenset({"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "TRACE"})
#: The host's route constraints (ASP.NET Core's) and what each matches.
CONSTRAINTS = {
    "int": r"-?\d+",
    "long": r"-?\d+",
    "bool": r"(?i:true|false)",
    "alpha": r"[A-Za-z]+",
    "guid": r"[0-9A-Fa-f]{8}-?[0-9A-Fa-f]{4}-?[0-9A-Fa-f]{4}-?[0-9A-Fa-f]{4}-?[0-9A-Fa-f]{12}",
    "double": r"-?\d+(?:\.\d+)?",
    "float": r"-?\d+(?:\.\d+)?",
    "decimal": r"-?\d+(?:\.\d+)?",
    "datetime": r"[0-9T:.\-+Z]+",
}


def locate(config: Config) -> Config:
    root = project_root(config)
    v2 = os.path.isfile(os.path.join(root, "function_app.py"))
    return config.replace(handler_folder=root, handler_module_name="function_app" if v2 else "host", handler_function_name="app" if v2 else "functions")


# -- routes -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Route:
    """One function's HTTP trigger: its route template made a regex, its methods, the function."""

    name: str
    template: str
    pattern: re.Pattern[str]
    methods: frozenset[str]
    function: Callable[..., Any]
    parameter: str  # the trigger's parameter name (``req``)
    takes_context: bool
    directory: str
    precedence: tuple[int, ...] = field(default=())
    #: The ``http`` output binding's name: ``$return`` (the return value), or a parameter given a ``func.Out``.
    output: str = RETURN

    def match(self, path: str) -> dict[str, str] | None:
        found = self.pattern.fullmatch(path)
        if found is None:
            return None
        return {name: value for name, value in found.groupdict().items() if value is not None}


_PARAMETER = re.compile(r"\{(\*?)([A-Za-z_]\w*)(\??)(?::([a-z]+)(?:\([^)]*\))?)?(\??)(?:=[^}]*)?\}")


def compile_route(prefix: str, template: str) -> tuple[re.Pattern[str], tuple[int, ...]]:
    """The regex for ``prefix/template`` as the host matches it (case-insensitive literals), and its precedence."""
    full = "/".join(part.strip("/") for part in (prefix, template) if part.strip("/"))
    pattern = ""
    precedence: list[int] = []
    for segment in full.split("/") if full else []:
        found = _PARAMETER.fullmatch(segment)
        if found is None:
            if "{" in segment:
                raise LoadError(f"route template {template!r} has a segment funcwsgi cannot match: {segment!r}")
            pattern += "/" + re.escape(segment)
            precedence.append(0)
            continue
        catch_all, name, optional, constraint, optional_after = found.groups()
        optional = optional or optional_after
        if constraint and constraint not in CONSTRAINTS:
            raise LoadError(f"route template {template!r} uses the constraint {constraint!r}; known: {', '.join(sorted(CONSTRAINTS))}")
        body = ".*" if catch_all else CONSTRAINTS.get(constraint or "", "[^/]+")
        group = f"(?P<{name}>{body})"
        if catch_all or optional:
            pattern += f"(?:/{group})?"
        else:
            pattern += "/" + group
        precedence.append(3 if catch_all else 1 if constraint else 2)
    return re.compile(f"(?i:{pattern or ''})/?" if pattern else "/?"), tuple(precedence)


# -- loading ------------------------------------------------------------------------------


def _route_prefix(root: str) -> str:
    path = os.path.join(root, "host.json")
    try:
        with open(path, encoding="utf-8") as handle:
            host = json.load(handle)
    except OSError:
        return DEFAULT_ROUTE_PREFIX
    except json.JSONDecodeError as error:
        raise LoadError(f"{path} is not JSON: {error}") from None
    http = ((host.get("extensions") or {}).get("http") or {}) if isinstance(host, dict) else {}
    prefix = http.get("routePrefix", DEFAULT_ROUTE_PREFIX)
    return str(prefix) if prefix is not None else DEFAULT_ROUTE_PREFIX


def _methods(values: Any) -> frozenset[str]:
    if not values:
        return ALL_METHODS
    return frozenset(str(getattr(value, "value", value)).upper() for value in values)


def _takes_context(function: Callable[..., Any]) -> bool:
    try:
        return "context" in inspect.signature(function).parameters
    except (TypeError, ValueError):
        return False


def _v2_routes(root: str, prefix: str) -> tuple[list[Route], str]:
    import azure.functions as func

    from ..handler.loader import _import_module

    path = os.path.join(root, "function_app.py")
    module = _import_module("function_app", root, path)
    apps = [value for value in vars(module).values() if isinstance(value, func.FunctionApp)]
    if not apps:
        raise LoadError(f"no func.FunctionApp() in {path}; expected app = func.FunctionApp() with @app.route functions")
    routes: list[Route] = []
    for function in apps[0].get_functions():
        trigger = next((b.get_dict_repr() for b in function.get_bindings() if b.get_dict_repr().get("type") == "httpTrigger"), None)
        if trigger is None:
            continue  # timers, queues...: no HTTP route (docs/migration-azure.md)
        name = str(function.get_function_name())
        user = function.get_user_function()
        template = str(trigger.get("route") or name)
        pattern, precedence = compile_route(prefix, template)
        parameter = str(trigger.get("name", "req"))
        routes.append(Route(name, template, pattern, _methods(trigger.get("methods")), user, parameter, _takes_context(user), root, precedence))
    return routes, path


def _v1_routes(root: str, prefix: str) -> tuple[list[Route], str]:
    if root not in sys.path:
        sys.path.insert(0, root)
    # The worker imports each function as a module of the package __app__ (the app's folder),
    # so `from ..shared import x` reaches the app's shared code.
    package = types.ModuleType(APP_PACKAGE)
    package.__path__ = [root]
    sys.modules[APP_PACKAGE] = package
    routes: list[Route] = []
    for entry in _entries(root):
        spec_path = os.path.join(root, entry, "function.json")
        if not os.path.isfile(spec_path):
            continue
        try:
            with open(spec_path, encoding="utf-8") as handle:
                spec = json.load(handle)
        except (OSError, json.JSONDecodeError) as error:
            raise LoadError(f"{spec_path} cannot be read: {error}") from None
        trigger = next((b for b in spec.get("bindings", ()) if b.get("type") == "httpTrigger"), None)
        if trigger is None:
            continue
        script = os.path.splitext(str(spec.get("scriptFile", "__init__.py")))[0].lstrip("./")
        module_name = entry if script == "__init__" else f"{entry}.{script}"
        entry_point = str(spec.get("entryPoint", "main"))
        try:
            module = importlib.import_module(f"{APP_PACKAGE}.{module_name}")
        except Exception as error:
            raise LoadError(f"importing {module_name} ({spec_path}) raised {type(error).__name__}: {error}") from None
        user = getattr(module, entry_point, None)
        if not callable(user):
            raise LoadError(f"no function {entry_point!r} in {module_name} ({spec_path}); set entryPoint to the function's name")
        template = str(trigger.get("route") or entry)
        pattern, precedence = compile_route(prefix, template)
        output = next((b for b in spec.get("bindings", ()) if b.get("type") == "http" and b.get("direction") == "out"), None)
        routes.append(
            Route(entry, template, pattern, _methods(trigger.get("methods")), user, str(trigger.get("name", "req")), _takes_context(user),
                  os.path.join(root, entry), precedence, str(output.get("name") or RETURN) if output else "")
        )
    return routes, os.path.join(root, "host.json")


def load(config: Config) -> LoadedFunction:
    from ..handler.loader import LoadedFunction

    try:
        import azure.functions  # noqa: F401 - the app's own dependency; checked before its import fails in user code
    except ImportError:
        raise LoadError("an Azure Functions app needs the azure-functions library; install funcwsgi[azure]") from None
    root = config.handler_folder
    prefix = _route_prefix(root)
    v2 = config.handler_module_name == "function_app"
    routes, path = _v2_routes(root, prefix) if v2 else _v1_routes(root, prefix)
    if not routes:
        raise LoadError(f"no HTTP-triggered function in {path}; expected @app.route functions or */function.json with an httpTrigger binding")
    # The host's precedence: literal segments before parameters before catch-alls, segment by segment.
    routes.sort(key=lambda route: route.precedence)
    router = Router(tuple(routes))
    return LoadedFunction(function=router, signature=Signature.NONE, name=", ".join(r.name for r in routes), path=path, folder=root)


class Out:
    """The worker's ``func.Out``: a v1 function's named output binding, set with ``set()``."""

    def __init__(self) -> None:
        self.value: Any = None

    def set(self, value: Any) -> None:
        self.value = value

    def get(self) -> Any:
        return self.value


@dataclass
class Context:
    """What a function's ``context`` parameter receives: the invocation's names."""

    invocation_id: str
    function_name: str
    function_directory: str
    trace_context: Any = None
    retry_context: Any = None


class Router:
    """The app's functions, matched by path and method as the host matches them."""

    def __init__(self, routes: tuple[Route, ...]) -> None:
        self.routes = routes

    def __call__(self, environ: dict[str, Any]) -> Any:
        import azure.functions as func

        path = utf8(environ.get("PATH_INFO", "") or "/")  # the host routes the decoded path, as text
        method = environ.get("REQUEST_METHOD", "GET")
        for route in self.routes:
            parameters = route.match(path)
            if parameters is None or method not in route.methods:
                continue
            request = func.HttpRequest(
                method=method,
                url=_url(environ),
                headers=_headers(environ),
                params=_params(utf8(environ.get("QUERY_STRING", ""))),
                route_params=parameters,
                body=read_body(environ),
            )
            arguments: dict[str, Any] = {route.parameter: request}
            if route.takes_context:
                arguments["context"] = Context(str(uuid.uuid4()), route.name, route.directory)
            out = None
            if route.output not in (RETURN, ""):
                out = arguments[route.output] = Out()
            result = route.function(**arguments)
            if inspect.isawaitable(result):
                import asyncio  # only for async functions: recognising platforms must not import it for all

                result = asyncio.run(_awaited(result))
            if route.output == RETURN:
                return to_response(result)
            # A named output (or none): the return value is not the answer; nothing set is the host's empty 200.
            value = out.get() if out is not None else None
            return NO_OUTPUT if value is None else to_response(value)
        return NOT_FOUND

    def __repr__(self) -> str:
        return f"Router({', '.join(route.name for route in self.routes)})"


async def _awaited(awaitable: Any) -> Any:
    return await awaitable


class UnencodableResult(TypeError):
    """The function returned what the worker cannot encode for an HTTP output: the host answers 500."""


def to_response(result: Any) -> Any:
    """What the host answers for a function's return value, as the Python worker encodes it and the host writes it.

    azure-functions' ``HttpResponseConverter.encode`` and the worker's
    ``datum_as_proto``, then the host's ``HttpBinding.CreateResult`` and
    ``RawScriptResult`` (docs/migration-azure.md#what-the-caller-receives).
    """
    import azure.functions as func

    if isinstance(result, func.HttpResponse):
        return _http_response(result)
    if isinstance(result, str):
        return _string_result(result)
    # The converter encodes HttpResponse and str only; the worker fails the invocation.
    raise UnencodableResult(f"the function returned {type(result).__name__}; an Azure HTTP function returns func.HttpResponse or str")


def _http_response(result: Any) -> Response:
    headers = result.headers
    # The converter adds Content-Type from mimetype, with the charset for text/* only.
    if "content-type" not in headers:
        mimetype = result.mimetype
        headers["content-type"] = f"{mimetype}; charset={result.charset}" if mimetype.startswith("text/") else mimetype
    cookies = headers.get_all("Set-Cookie")
    # The worker sends the headers as a map: a name said twice keeps its last value; the host keeps
    # the first of names that differ only in case (Set-Cookie goes apart, every one kept).
    sent = {name: value for name, value in headers.items() if name.lower() != "set-cookie"}
    response = Response(result.get_body(), status=int(result.status_code))
    response.headers.clear()
    for name, value in sent.items():
        if name.lower() == "content-type":
            response.headers["Content-Type"] = value
        elif name not in response.headers:
            response.headers.add(name, value)
    for cookie in cookies:
        response.headers.add("Set-Cookie", cookie)
    return response


def _string_result(text: str) -> Response:
    """A returned ``str``: the host reads it as JSON where it can, and a JSON object with a ``body`` is a response object."""
    try:
        content: Any = json.loads(text)
    except ValueError:
        return Response(text, status=200, content_type=HOST_TEXT)
    status, headers = 200, {}
    if isinstance(content, dict) and (body_key := _key(content, "body")) is not None:
        status = _status_of(content)
        given = content.get(_key(content, "headers") or "headers")
        headers = {str(name): value for name, value in given.items()} if isinstance(given, dict) else {}
        content = content[body_key]
        body = json.dumps(content, separators=(",", ":"), ensure_ascii=False) if isinstance(content, dict) else _net_text(content)
    else:
        body = _net_text(content)
    response = Response(body, status=status, content_type=HOST_TEXT)
    for name, value in headers.items():
        if name.lower() == "content-type":
            response.headers["Content-Type"] = str(value)
        elif name not in response.headers:
            response.headers.add(name, _net_text(value))
    return response


#: The content type ASP.NET's string formatter writes when the function set none.
HOST_TEXT = "text/plain; charset=utf-8"


def _key(mapping: dict[str, Any], name: str) -> str | None:
    """The key of ``mapping`` that is ``name`` in any case (the host looks response-object keys up so)."""
    return next((key for key in mapping if key.lower() == name), None)


def _status_of(response_object: dict[str, Any]) -> int:
    for name in ("statuscode", "status"):
        key = _key(response_object, name)
        if key is None:
            continue
        value = response_object[key]
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lstrip("+-").isdigit():
            return int(value)
        return 200
    return 200


def _net_text(value: Any) -> str:
    """A JSON value as the host turns it into text (Newtonsoft's ToString(): objects indented, True/False, null empty)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, (dict, list)):
        return json.dumps(value, indent=2, ensure_ascii=False)
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return str(value)


def _params(query: str) -> dict[str, str]:
    """The query as the host hands it to the worker: one string per name, repeated values joined by commas."""
    params: dict[str, str] = {}
    for key, value in parse_qsl(query, keep_blank_values=True):
        params[key] = f"{params[key]},{value}" if key in params else value
    return params


def _url(environ: dict[str, Any]) -> str:
    host = utf8(environ.get("HTTP_HOST") or f"{environ.get('SERVER_NAME', 'localhost')}:{environ.get('SERVER_PORT', '80')}")
    query = utf8(environ.get("QUERY_STRING", ""))
    # ASP.NET Core's display URL: the path un-escaped, as text.
    path = utf8(environ.get("SCRIPT_NAME", "") + (environ.get("PATH_INFO", "") or "/"))
    return f"{environ.get('wsgi.url_scheme', 'http')}://{host}{path}" + (f"?{query}" if query else "")


def _headers(environ: dict[str, Any]) -> dict[str, str]:
    """The request's headers, values as the UTF-8 text the host passes to the worker."""
    headers = {key[5:].replace("_", "-").lower(): utf8(str(value)) for key, value in environ.items() if key.startswith("HTTP_")}
    for key, name in (("CONTENT_TYPE", "content-type"), ("CONTENT_LENGTH", "content-length")):
        if environ.get(key):
            headers[name] = utf8(environ[key])
    return headers


def invoker(loaded: LoadedFunction, config: Config, function: Callable[..., Any]) -> Invoker[None]:
    router = loaded.function

    def call(environ: dict[str, Any]) -> tuple[Any, None]:
        return router(environ), None

    return call
