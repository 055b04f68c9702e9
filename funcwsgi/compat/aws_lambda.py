"""AWS Lambda's contract behind API Gateway and function URLs: ``handler(event, context)``.

The call becomes the event API Gateway would send, in payload format 2.0 (HTTP
APIs, function URLs) or 1.0 (REST APIs); what the handler returns becomes the
response by the gateway's rules; an exception is the gateway's own 500 (2.0)
or 502 (1.0), with nothing of the exception in it. The handler string
(``_HANDLER``), the payload format and the routes come from the platform's
own files and variables: ``_HANDLER``/``LAMBDA_TASK_ROOT`` or a SAM
``template.yaml`` beside the code (docs/migration-aws-lambda.md).
"""

from __future__ import annotations

import base64
import datetime
import functools
import json
import logging
import os
import re
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl

from ..config import TOKEN
from ..environ import REQUEST_ID_KEY
from ..errors import LoadError
from ..handler.signatures import Invoker
from ..replies import BODILESS, Reply, status_line
from ..request import read_body
from .signals import SAM_TEMPLATE_NAMES as TEMPLATE_NAMES
from .sources import project_root
from .wsgi_text import utf8

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIEnvironment

    from ..config import Config
    from ..handler.loader import LoadedFunction

log = logging.getLogger("funcwsgi.aws_lambda")

#: What API Gateway answers itself, word for word (HTTP APIs and REST APIs differ).
FAILED_V2 = Reply(500, '{"message":"Internal Server Error"}', content_type="application/json")
FAILED_V1 = Reply(502, '{"message": "Internal server error"}', content_type="application/json")
NOT_FOUND_V2 = Reply(404, '{"message":"Not Found"}', content_type="application/json")
NOT_FOUND_V1 = Reply(403, '{"message":"Missing Authentication Token"}', content_type="application/json")
#: Lambda's own limit when no call timeout is set.
LAMBDA_MAX_SECONDS = 900.0
DEFAULT_CALL_TIMEOUT = 180.0
ACCOUNT = "123456789012"
JSON = "application/json"
#: Content types HTTP APIs and function URLs pass as text; any other body arrives base64-encoded.
_TEXTUAL = re.compile(r"(text/.*|application/(json|javascript|xml|yaml|x-www-form-urlencoded|[\w.+-]*\+(json|xml)))(;.*)?", re.I)


# -- the SAM template ------------------------------------------------------------------


@functools.cache
def _template_loader() -> type[Any]:
    """YAML with CloudFormation's short tags (``!Ref``, ``!GetAtt``, ``!Sub``) read as plain values.

    Made on first use: recognising platforms at start-up must not import yaml for every function.
    """
    import yaml

    class TemplateLoader(yaml.SafeLoader):
        pass

    def any_tag(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> Any:
        if isinstance(node, yaml.ScalarNode):
            return loader.construct_scalar(node)
        if isinstance(node, yaml.SequenceNode):
            return loader.construct_sequence(node)
        if isinstance(node, yaml.MappingNode):
            return loader.construct_mapping(node)
        return None

    TemplateLoader.add_multi_constructor("!", any_tag)
    return TemplateLoader


@dataclass(frozen=True)
class Route:
    """One API event of the template: its method, its path template and the regex matching it."""

    method: str
    path: str
    pattern: re.Pattern[str]
    names: tuple[str, ...]

    def match(self, method: str, path: str) -> dict[str, str] | None:
        if self.method not in ("ANY", method):
            return None
        found = self.pattern.fullmatch(path)
        return None if found is None else dict(zip(self.names, found.groups(), strict=True))


def make_route(method: str, path: str) -> Route:
    names: list[str] = []
    parts: list[str] = []
    for piece in re.split(r"(\{[^}]+\})", path):
        if piece.startswith("{") and piece.endswith("}"):
            name = piece[1:-1]
            greedy = name.endswith("+")
            names.append(name.rstrip("+"))
            parts.append("(.+)" if greedy else "([^/]+)")
        else:
            parts.append(re.escape(piece))
    return Route(method.upper(), path, re.compile("".join(parts)), tuple(names))


@dataclass(frozen=True)
class Template:
    """What a SAM template says about the function served: its handler, payload format, routes and binary types."""

    handler: str | None = None
    code_uri: str = ""
    payload_format: str | None = None
    routes: tuple[Route, ...] = ()
    binary_media_types: tuple[str, ...] = ()
    timeout: float | None = None
    memory_size: int | None = None


def read_template(root: str, handler: str | None) -> Template:
    """The function of ``root``'s SAM template whose ``Handler`` is ``handler`` (or its only function)."""
    for name in TEMPLATE_NAMES:
        path = os.path.join(root, name)
        if os.path.isfile(path):
            break
    else:
        return Template()
    import yaml

    try:
        with open(path, encoding="utf-8") as handle:
            document = yaml.load(handle, Loader=_template_loader())  # noqa: S506 - a SafeLoader subclass
    except (OSError, yaml.YAMLError) as error:
        raise LoadError(f"{path} cannot be read as a SAM template: {error}") from None
    if not isinstance(document, dict):
        return Template()
    globals_ = document.get("Globals") or {}
    defaults = globals_.get("Function") or {}
    functions = [
        (name, resource.get("Properties") or {})
        for name, resource in (document.get("Resources") or {}).items()
        if isinstance(resource, dict) and resource.get("Type") == "AWS::Serverless::Function"
    ]
    chosen = [props for _, props in functions if handler is None or props.get("Handler", defaults.get("Handler")) == handler]
    if not chosen:
        return Template()
    props = chosen[0]
    binary = [str(kind).replace("~1", "/") for kind in (globals_.get("Api") or {}).get("BinaryMediaTypes") or ()]
    routes: list[Route] = []
    formats: set[str] = set()
    for event in (props.get("Events") or {}).values():
        kind = event.get("Type") if isinstance(event, dict) else None
        properties = event.get("Properties") or {}
        if kind == "Api":
            formats.add("1.0")
        elif kind == "HttpApi":
            formats.add(str(properties.get("PayloadFormatVersion", "2.0")))
        else:
            continue
        if properties.get("Path"):
            routes.append(make_route(str(properties.get("Method", "any")), str(properties["Path"])))
    if props.get("FunctionUrlConfig"):
        formats.add("2.0")
    if len(formats) > 1:
        raise LoadError(f"{path} gives the function events of both payload formats ({', '.join(sorted(formats))}); set LAMBDA_PAYLOAD_FORMAT")
    timeout = props.get("Timeout", defaults.get("Timeout"))
    memory = props.get("MemorySize", defaults.get("MemorySize"))
    return Template(
        handler=props.get("Handler", defaults.get("Handler")),
        code_uri=str(props.get("CodeUri", defaults.get("CodeUri", "")) or ""),
        payload_format=formats.pop() if formats else None,
        routes=tuple(routes),
        binary_media_types=tuple(binary),
        timeout=float(timeout) if isinstance(timeout, (int, float)) else None,
        memory_size=int(memory) if isinstance(memory, int) else None,
    )


# -- where the handler is ----------------------------------------------------------------


def locate(config: Config) -> Config:
    """The folder, module and function ``_HANDLER`` (or the SAM template's ``Handler``) names."""
    root = config.lambda_task_root or project_root(config)
    template = read_template(root, config.lambda_handler)
    handler = config.lambda_handler or template.handler
    if not handler and os.path.isfile(os.path.join(root, "lambda_function.py")):
        handler = "lambda_function.lambda_handler"  # what the Lambda console creates
    if template.timeout and config.server_call_timeout == DEFAULT_CALL_TIMEOUT:
        # The template's Timeout is the function's call timeout unless SERVER_CALL_TIMEOUT says otherwise.
        config = config.replace(server_call_timeout=template.timeout)
    if not handler:
        return config.replace(handler_folder=root)
    base = os.path.join(root, template.code_uri) if template.code_uri and not config.lambda_handler else root
    path, _, function = handler.rpartition(".")
    if not path or not function:
        raise LoadError(f"_HANDLER={handler!r} is invalid: expected module.function or dir/module.function such as 'app.lambda_handler'")
    # 'dir/module' and 'package.module' both name a file below the task root.
    pieces = path.replace(".", "/").split("/")
    folder = os.path.join(base, *pieces[:-1])
    return config.replace(handler_folder=folder, handler_module_name=pieces[-1], handler_function_name=function, lambda_task_root=root)


# -- the context object ------------------------------------------------------------------


@dataclass
class LambdaContext:
    """The ``context`` a Lambda handler receives, with the attributes awslambdaric gives it."""

    aws_request_id: str
    function_name: str
    function_version: str
    invoked_function_arn: str
    memory_limit_in_mb: str
    log_group_name: str
    log_stream_name: str
    deadline: float  # time.monotonic() at which the call's time is up
    identity: Any = None
    client_context: Any = None
    tenant_id: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self.deadline - time.monotonic()) * 1000))


# -- the call ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Settings:
    """Everything the invoker needs, computed once at start-up."""

    payload_format: str
    routes: tuple[Route, ...]
    binary_media_types: tuple[str, ...]
    timeout: float
    function_name: str
    function_version: str
    arn: str
    memory: str
    log_group: str
    log_stream: str


def settings_for(config: Config, template: Template) -> Settings:
    name = config.aws_lambda_function_name or config.func_name or config.handler_module_name
    today = datetime.date.today().strftime("%Y/%m/%d")
    return Settings(
        payload_format=config.lambda_payload_format or template.payload_format or "2.0",
        routes=template.routes,
        binary_media_types=template.binary_media_types,
        timeout=config.server_call_timeout or LAMBDA_MAX_SECONDS,
        function_name=name,
        function_version=config.aws_lambda_function_version,
        arn=f"arn:aws:lambda:{config.aws_region}:{ACCOUNT}:function:{name}",
        memory=str(config.aws_lambda_function_memory_size if template.memory_size is None else template.memory_size),
        log_group=config.aws_lambda_log_group_name or f"/aws/lambda/{name}",
        log_stream=config.aws_lambda_log_stream_name or f"{today}/[{config.aws_lambda_function_version}]{uuid.uuid4().hex}",
    )


def invoker(loaded: LoadedFunction, config: Config, function: Callable[..., Any]) -> Invoker[None]:
    """Call ``function(event, context)`` with the gateway's event; answer with the gateway's response."""
    template = read_template(config.lambda_task_root or loaded.folder, config.lambda_handler)
    settings = settings_for(config, template)
    v2 = settings.payload_format == "2.0"
    failed = FAILED_V2 if v2 else FAILED_V1
    not_found = NOT_FOUND_V2 if v2 else NOT_FOUND_V1
    build_event = event_v2 if v2 else event_v1
    ensure_ascii = config.aws_execution_env not in UNESCAPED_RUNTIMES
    to_response = functools.partial(response_v2, ensure_ascii=ensure_ascii) if v2 else response_v1
    where = f"{loaded.name}() in {loaded.path}"

    def call(environ: dict[str, Any]) -> tuple[Any, None]:
        method = environ.get("REQUEST_METHOD", "GET")
        path = utf8(environ.get("PATH_INFO", "") or "/")
        route, parameters = match_route(settings.routes, method, path)
        if route is None and settings.routes:
            return not_found, None
        started = time.monotonic()
        request_id = str(environ.get(REQUEST_ID_KEY) or uuid.uuid4())
        event = build_event(environ, route, parameters, request_id, settings)
        context = LambdaContext(
            aws_request_id=request_id,
            function_name=settings.function_name,
            function_version=settings.function_version,
            invoked_function_arn=settings.arn,
            memory_limit_in_mb=settings.memory,
            log_group_name=settings.log_group,
            log_stream_name=settings.log_stream,
            deadline=started + settings.timeout,
        )
        try:
            result = function(event, context)
        except Exception:
            # Lambda logs the handler's traceback; the gateway answers with its own fixed text.
            log.error("%s raised", where, exc_info=True)
            return failed, None
        try:
            return to_response(result), None
        except UnencodableResult as error:
            # The runtime cannot marshal it: a function error, which the gateway answers as a raise.
            log.error("%s returned a result the Lambda runtime cannot marshal to JSON: %s", where, error)
            return failed, None
        except MalformedResponse as error:
            log.error("%s returned a response API Gateway refuses: %s", where, error)
            return FAILED_V1 if not v2 else failed, None

    return call


def match_route(routes: Iterable[Route], method: str, path: str) -> tuple[Route | None, dict[str, str]]:
    for route in routes:
        found = route.match(method, path)
        if found is not None:
            return route, found
    return None, {}


def _header_pairs(environ: dict[str, Any]) -> list[tuple[str, str]]:
    """The request's headers as (Name-As-Sent-Case, value), values as the UTF-8 text the gateway gives.

    The WSGI environ keeps no original case.
    """
    pairs: list[tuple[str, str]] = []
    for key, value in environ.items():
        if key.startswith("HTTP_"):
            pairs.append((key[5:].replace("_", "-").title(), utf8(value)))
    for key, name in (("CONTENT_TYPE", "Content-Type"), ("CONTENT_LENGTH", "Content-Length")):
        if environ.get(key):
            pairs.append((name, utf8(environ[key])))
    return pairs


def _encoded_body(data: bytes, base64_encoded: bool) -> tuple[str | None, bool]:
    if not data:
        return None, False
    if base64_encoded:
        return base64.b64encode(data).decode("ascii"), True
    return data.decode("utf-8", "replace"), False


def _request_time(now: float) -> str:
    return time.strftime("%d/%b/%Y:%H:%M:%S +0000", time.gmtime(now))


def event_v2(environ: dict[str, Any], route: Route | None, parameters: dict[str, str], request_id: str, settings: Settings) -> dict[str, Any]:
    """The payload format 2.0 event: lower-cased headers, comma-joined repeats, cookies apart."""
    headers: dict[str, str] = {}
    cookies: list[str] = []
    for name, value in _header_pairs(environ):
        lower = name.lower()
        if lower == "cookie":
            cookies.extend(part.strip() for part in value.split(";") if part.strip())
            continue
        headers[lower] = f"{headers[lower]},{value}" if lower in headers else value
    raw_query = utf8(environ.get("QUERY_STRING", ""))
    query: dict[str, str] = {}
    for key, value in parse_qsl(raw_query, keep_blank_values=True):
        query[key] = f"{query[key]},{value}" if key in query else value
    data = read_body(environ)
    content_type = headers.get("content-type", "")
    body, encoded = _encoded_body(data, not _TEXTUAL.fullmatch(content_type) if content_type else _is_binary(data))
    method = environ.get("REQUEST_METHOD", "GET")
    # HTTP APIs give rawPath percent-decoded (function URLs keep the encoding): see docs/migration-aws-lambda.md.
    path = utf8(environ.get("PATH_INFO", "") or "/")
    route_key = f"{route.method} {route.path}" if route is not None else "$default"
    now = time.time()
    host = headers.get("host", "localhost")
    event: dict[str, Any] = {
        "version": "2.0",
        "routeKey": route_key,
        "rawPath": path,
        "rawQueryString": raw_query,
        "headers": headers,
        "requestContext": {
            "accountId": ACCOUNT,
            "apiId": host.split(".", 1)[0],
            "domainName": host,
            "domainPrefix": host.split(".", 1)[0],
            "http": {
                "method": method,
                "path": path,
                "protocol": environ.get("SERVER_PROTOCOL", "HTTP/1.1"),
                "sourceIp": environ.get("REMOTE_ADDR", ""),
                "userAgent": headers.get("user-agent", ""),
            },
            "requestId": request_id,
            "routeKey": route_key,
            "stage": "$default",
            "time": _request_time(now),
            "timeEpoch": int(now * 1000),
        },
        "isBase64Encoded": encoded,
    }
    if cookies:
        event["cookies"] = cookies
    if query:
        event["queryStringParameters"] = query
    if parameters:
        event["pathParameters"] = parameters
    if body is not None:
        event["body"] = body
    return event


def _is_binary(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def event_v1(environ: dict[str, Any], route: Route | None, parameters: dict[str, str], request_id: str, settings: Settings) -> dict[str, Any]:
    """The payload format 1.0 (REST API proxy) event: single- and multi-value headers and query."""
    multi_headers: dict[str, list[str]] = {}
    for name, value in _header_pairs(environ):
        multi_headers.setdefault(name, []).append(value)
    multi_query: dict[str, list[str]] = {}
    for key, value in parse_qsl(utf8(environ.get("QUERY_STRING", "")), keep_blank_values=True):
        multi_query.setdefault(key, []).append(value)
    data = read_body(environ)
    content_type = (environ.get("CONTENT_TYPE") or "").split(";", 1)[0].strip().lower()
    binary = any(_media_type_matches(kind, content_type) for kind in settings.binary_media_types)
    body, encoded = _encoded_body(data, binary)
    method = environ.get("REQUEST_METHOD", "GET")
    path = utf8(environ.get("PATH_INFO", "") or "/")
    if route is None:
        resource, parameters = "/{proxy+}", {"proxy": path.lstrip("/")}
    else:
        resource = route.path
    now = time.time()
    return {
        "version": "1.0",
        "resource": resource,
        "path": path,
        "httpMethod": method,
        "headers": {name: values[-1] for name, values in multi_headers.items()},
        "multiValueHeaders": multi_headers,
        "queryStringParameters": {key: values[-1] for key, values in multi_query.items()} or None,
        "multiValueQueryStringParameters": multi_query or None,
        "pathParameters": parameters or None,
        "stageVariables": None,
        "requestContext": {
            "accountId": ACCOUNT,
            "apiId": "funcwsgi",
            "resourceId": "funcwsgi",
            "resourcePath": resource,
            "httpMethod": method,
            "path": f"/Prod{path}",
            "protocol": environ.get("SERVER_PROTOCOL", "HTTP/1.1"),
            "stage": "Prod",
            "requestId": request_id,
            "requestTime": _request_time(now),
            "requestTimeEpoch": int(now * 1000),
            "identity": {"sourceIp": environ.get("REMOTE_ADDR", ""), "userAgent": utf8(environ.get("HTTP_USER_AGENT", ""))},
            "domainName": utf8(environ.get("HTTP_HOST", "localhost")),
        },
        "body": body,
        "isBase64Encoded": encoded,
    }


def _media_type_matches(pattern: str, content_type: str) -> bool:
    if pattern == "*/*":
        return True
    if pattern.endswith("/*"):
        return content_type.startswith(pattern[:-1])
    return pattern.lower() == content_type


class MalformedResponse(ValueError):
    """A handler's result the gateway cannot turn into a response (it answers 502)."""


#: What a header value may not hold: the characters that end or split a header line.
_LINE_BREAKING = re.compile(r"[\r\n\x00]")


def _status(value: Any) -> int:
    if isinstance(value, bool):
        raise MalformedResponse(f"statusCode {value!r} is not an integer")
    try:
        code = int(value)
    except (TypeError, ValueError):
        raise MalformedResponse(f"statusCode {value!r} is not an integer") from None
    # 1xx are interim answers, never a response's final status.
    if not 200 <= code <= 599:
        raise MalformedResponse(f"statusCode {code} is not a final HTTP status (200-599)")
    return code


def _text(value: Any, what: str) -> str | None:
    """A marshalled header or cookie value as the gateway reads it: text, a number or true/false as its JSON; null is none.

    Objects and arrays, characters outside Latin-1 and CR, LF or NUL make the response malformed.
    """
    if value is None:
        return None
    if isinstance(value, str):
        text = value
    elif isinstance(value, (bool, int, float)):
        text = json.dumps(value)
    else:
        raise MalformedResponse(f"{what} is a {type(value).__name__}, not a string")
    if _LINE_BREAKING.search(text):
        raise MalformedResponse(f"{what} holds CR, LF or NUL")
    try:
        text.encode("latin-1")
    except UnicodeEncodeError:
        raise MalformedResponse(f"{what} {text!r} has characters outside Latin-1") from None
    return text


def _name(name: str, what: str) -> str:
    if not TOKEN.fullmatch(name):  # a header name as HTTP allows it (RFC 9110's token)
        raise MalformedResponse(f"{what} name {name!r} is not an HTTP header name")
    return name


def _mapping(result: dict[str, Any], key: str) -> dict[str, Any]:
    value = result.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise MalformedResponse(f"{key} is a {type(value).__name__}, not an object")
    return value


def _headers(result: dict[str, Any]) -> list[tuple[str, str]]:
    headers: list[tuple[str, str]] = []
    for name, value in _mapping(result, "headers").items():
        text = _text(value, f"header {name!r}")
        if text is not None:
            headers.append((_name(name, "header"), text))
    return headers


def _response_body(result: dict[str, Any]) -> bytes:
    body = result.get("body")
    if body is None:
        return b""
    text = body if isinstance(body, str) else json.dumps(body)
    if result.get("isBase64Encoded") is True:  # a JSON true only: "false" is not false's opposite
        try:
            return base64.b64decode(text, validate=True)
        except ValueError:
            raise MalformedResponse("isBase64Encoded is true but the body is not base64") from None
    return text.encode()


def marshalled(result: Any) -> Any:
    """``result`` as the gateway receives it: what the runtime's JSON holds (raises :class:`UnencodableResult`)."""
    return json.loads(result_json(result))


class Answer:
    """The gateway's response to a call: status, headers, body, sent as a WSGI app (no body for HEAD)."""

    __slots__ = ("status", "headers", "body")

    def __init__(self, code: int, headers: list[tuple[str, str]], body: bytes) -> None:
        self.status = status_line(code)
        if code in BODILESS:
            body = b""
        elif not any(name.lower() == "content-type" for name, _ in headers):
            headers.append(("Content-Type", JSON))  # the gateway's default
        headers = [(name, value) for name, value in headers if name.lower() != "content-length"]
        if code not in BODILESS:
            headers.append(("Content-Length", str(len(body))))
        self.headers = headers
        self.body = body

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> list[bytes]:
        start_response(self.status, self.headers)
        return [self.body] if self.body and environ.get("REQUEST_METHOD") != "HEAD" else []


#: The runtimes whose runtime interface client sends a result's non-ASCII characters as they are (its Encoder).
UNESCAPED_RUNTIMES = frozenset({"AWS_Lambda_python3.12", "AWS_Lambda_python3.13", "AWS_Lambda_python3.14", "AWS_Lambda_python3.15"})


class UnencodableResult(TypeError):
    """A result the runtime cannot marshal to JSON: Lambda reports a function error."""


def _decimal(value: Any) -> Any:
    import decimal

    if isinstance(value, decimal.Decimal):  # the runtime writes a Decimal as the number it holds
        return int(value) if value == value.to_integral_value() else float(value)
    raise UnencodableResult(f"the handler returned a {type(value).__name__} inside its result, which is not JSON")


def result_json(result: Any, ensure_ascii: bool = True) -> bytes:
    """The handler's result as the Python runtime marshals it (simplejson's default separators, Decimal as a number)."""
    try:
        return json.dumps(result, ensure_ascii=ensure_ascii, default=_decimal).encode()
    except (TypeError, ValueError) as error:
        raise UnencodableResult(str(error)) from None


def response_v2(result: Any, ensure_ascii: bool = True) -> Answer:
    """2.0's rules: a dict with ``statusCode`` is the response; any other value is a 200 JSON body.

    The runtime marshals what the handler returned to JSON; the function URL
    (and an HTTP API) sends a payload that is not a response object as its
    body, ``application/json``: a dict without ``statusCode`` as its JSON, a
    string with its quotes (docs/migration-aws-lambda.md).
    """
    if not isinstance(result, dict) or "statusCode" not in result:
        return Answer(200, [("Content-Type", JSON)], result_json(result, ensure_ascii))
    result = marshalled(result)
    headers = _headers(result)
    cookies = result.get("cookies")
    if cookies is not None and not isinstance(cookies, list):
        raise MalformedResponse(f"cookies is a {type(cookies).__name__}, not a list of strings")
    for cookie in cookies or ():
        text = _text(cookie, "a cookie")
        if text is not None:
            headers.append(("Set-Cookie", text))
    return Answer(_status(result["statusCode"]), headers, _response_body(result))


def response_v1(result: Any) -> Answer:
    """1.0's rules: only a dict with ``statusCode`` is a response; ``multiValueHeaders`` join ``headers``."""
    if not isinstance(result, dict) or "statusCode" not in result:
        raise MalformedResponse(f"a {type(result).__name__} without statusCode")
    result = marshalled(result)
    headers: list[tuple[str, str]] = []
    multi: dict[str, list[str]] = {}
    for name, values in _mapping(result, "multiValueHeaders").items():
        for value in values if isinstance(values, list) else [values]:
            text = _text(value, f"header {name!r}")
            if text is not None:
                multi.setdefault(_name(name, "header"), []).append(text)
                headers.append((name, text))
    for name, value in _headers(result):
        # Both given: the gateway merges them, a pair present in both once.
        if value not in multi.get(name, ()):
            headers.append((name, value))
    return Answer(_status(result["statusCode"]), headers, _response_body(result))
