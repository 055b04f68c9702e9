"""The mutable response a function fills in, and the coercion of return values.

:func:`send` turns whatever a function produced into a WSGI response. It is on
the hot path: common cases (``None``, ``str``, ``bytes``, ``dict``) take one
type check, one encode and one ``start_response`` call.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from .compat import is_cloud_event, to_binary
from .replies import STATUS_LINES, TEXT, status_line
from .request import werkzeug_parts

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIEnvironment
    from werkzeug.datastructures import Headers
    from werkzeug.wrappers import Response

JSON = "application/json"
BINARY = "application/octet-stream"
#: The commonest answer's type field, made once (a field is an immutable pair: every answer may share it).
TEXT_FIELD = ("Content-Type", TEXT)

_headers_type: type[Headers] | None = None


def new_headers(*fields: Any) -> Headers:
    """werkzeug's ``Headers``: imported the first time a response has fields of its own (a plain answer has none)."""
    global _headers_type
    if _headers_type is None:
        werkzeug_parts()  # werkzeug imported whole, by one thread at a time
        from werkzeug.datastructures import Headers

        _headers_type = Headers
    return _headers_type(*fields)


def is_loaded_instance(value: Any, module: str, name: str) -> bool:
    """Whether ``value`` is an instance of class ``name`` of ``module``, importing nothing: were the module not
    imported, nothing could be one (a function that returns a werkzeug response imported werkzeug to make it)."""
    loaded = sys.modules.get(module)
    return loaded is not None and isinstance(value, getattr(loaded, name))


class UnsupportedResponse(TypeError):
    """The function produced something that cannot become an HTTP response."""


class FunctionResponse:
    """What ``main(req, res)`` receives as ``res``.

    Set the status with :meth:`set_code`, headers with :meth:`set_header` or
    :attr:`headers`, and the body with :meth:`set_body` (coerced like a
    return value), :meth:`set_text`, :meth:`set_json` or :meth:`set_data`.
    Every setter returns the response, so calls chain.
    """

    __slots__ = ("status_code", "_headers", "body")

    def __init__(self) -> None:
        self.status_code: int = 200
        self._headers: Headers | None = None
        #: The body as set so far: ``None``, ``str``, ``bytes``, or anything a
        #: function may return (a dict becomes JSON when the response is sent).
        self.body: Any = None

    @property
    def headers(self) -> Headers:
        if self._headers is None:
            self._headers = new_headers()
        return self._headers

    def set_code(self, code: int) -> FunctionResponse:
        if type(code) is not int or not 100 <= code <= 999:
            raise ValueError(f"status code must be an integer from 100 to 999, got {code!r}")
        self.status_code = code
        return self

    setCode = set_code  # noqa: N815 - the spelling of the API rework document

    def set_header(self, name: str, value: str | int) -> FunctionResponse:
        self.headers.set(name, value)
        return self

    setHeader = set_header  # noqa: N815

    def add_header(self, name: str, value: str | int) -> FunctionResponse:
        self.headers.add(name, value)
        return self

    @property
    def content_type(self) -> str | None:
        return self._headers.get("Content-Type") if self._headers is not None else None

    @content_type.setter
    def content_type(self, value: str) -> None:
        self.headers.set("Content-Type", value)

    def set_body(self, body: Any) -> FunctionResponse:
        """Set the body; ``str``, ``bytes``, ``dict``/``list`` are coerced as return values are."""
        self.body = body
        return self

    def set_text(self, text: str, content_type: str = TEXT) -> FunctionResponse:
        self.body = text
        self.headers.set("Content-Type", content_type)
        return self

    def set_json(self, value: Any) -> FunctionResponse:
        self.body = json.dumps(value).encode()
        self.headers.set("Content-Type", JSON)
        return self

    def set_data(self, data: bytes, content_type: str = BINARY) -> FunctionResponse:
        self.body = bytes(data)
        self.headers.set("Content-Type", content_type)
        return self

    # Node-style spellings, so the same function reads alike in both runtimes.
    send = set_body

    def __repr__(self) -> str:
        return f"<FunctionResponse {self.status_code}>"


def encode_body(body: Any) -> tuple[bytes | Iterable[bytes], str]:
    """(body bytes or a stream, default content type) for a body value."""
    kind = type(body)
    if kind is str:
        return body.encode(), TEXT
    if kind is bytes:
        return body, BINARY
    if kind is dict or kind is list:
        return json.dumps(body).encode(), JSON
    if body is None:
        return b"", TEXT
    if isinstance(body, str):
        return str(body).encode(), TEXT
    if isinstance(body, (bytes, bytearray, memoryview)):
        return bytes(body), BINARY
    if isinstance(body, (dict, list)):
        return json.dumps(body).encode(), JSON
    if isinstance(body, Iterator) or _is_stream(body):
        return _encode_stream(body), TEXT
    raise UnsupportedResponse(
        f"the function returned a {kind.__module__}.{kind.__qualname__}, which cannot be a response body; "
        "return str, bytes, dict, list, a (body, status[, headers]) tuple, an iterator or a WSGI response"
    )


def _is_stream(body: Any) -> bool:
    return hasattr(body, "__iter__") and not isinstance(body, (tuple, set, frozenset))


def _encode_stream(chunks: Iterable[Any]) -> Iterator[bytes]:
    try:
        for chunk in chunks:
            if isinstance(chunk, str):
                yield chunk.encode()
            elif isinstance(chunk, (bytes, bytearray, memoryview)):
                yield bytes(chunk)
            else:
                raise UnsupportedResponse(f"a streamed chunk is a {type(chunk).__name__}; stream str or bytes")
    finally:
        close = getattr(chunks, "close", None)
        if close is not None:
            close()


def _parse_status(value: Any) -> int:
    code: int | None = None
    if isinstance(value, int) and not isinstance(value, bool):
        code = int(value)
    elif isinstance(value, str):
        head = value.strip().split(" ", 1)[0]
        if head.isdigit():
            code = int(head)
    if code is not None and 100 <= code <= 999:
        return code
    raise UnsupportedResponse(f"the status in a returned tuple must be an int or '201 Created', got {value!r}")


def _unpack_tuple(result: tuple[Any, ...]) -> tuple[Any, int | None, Any]:
    """(body, status or None, headers or None) from Flask-style tuples."""
    if len(result) == 3:
        return result[0], _parse_status(result[1]), result[2]
    if len(result) == 2:
        second = result[1]
        if isinstance(second, (dict, list)) or is_loaded_instance(second, "werkzeug.datastructures", "Headers"):
            return result[0], None, second
        return result[0], _parse_status(second), None
    raise UnsupportedResponse(f"a returned tuple must be (body, status), (body, headers) or (body, status, headers); got {len(result)} items")


def _amended(response: Response, status: int | None, headers: Any) -> Response:
    """A returned response object with a tuple's status and headers applied, as Flask does."""
    if status is not None:
        response.status_code = status
    if headers:
        items = headers.items() if isinstance(headers, dict) else headers
        for name, value in items:
            response.headers[name] = value
    return response


def send(
    result: Any,
    res: FunctionResponse | None,
    environ: WSGIEnvironment,
    start_response: StartResponse,
) -> Iterable[bytes]:
    """Send ``result`` (or ``res`` when the function returned ``None``)."""
    if type(result) is str and (res is None or res._headers is None):  # the commonest answer: a text, its type and length
        text = result.encode()
        code = 200 if res is None else res.status_code
        start_response(STATUS_LINES.get(code) or status_line(code), [TEXT_FIELD, ("Content-Length", str(len(text)))])
        return [] if environ.get("REQUEST_METHOD") == "HEAD" else [text]
    status: int | None = None
    extra_headers: Any = None
    if type(result) in _PLAIN:  # the commonest answers first: a str, bytes, a dict or a list is the body as it is
        body = result
    elif result is None:
        body = res.body if res is not None else None
    elif type(result) is FunctionResponse:  # `return res.set_code(201)`: every setter returns res
        res = result
        body = result.body
    elif type(result) is tuple:
        body, status, extra_headers = _unpack_tuple(result)
        if is_loaded_instance(body, "werkzeug.wrappers", "Response"):  # Flask's (jsonify(...), 201)
            return _amended(body, status, extra_headers)(environ, start_response)
    elif callable(result) and not isinstance(result, (str, bytes, dict, list)):
        # A werkzeug Response, a Flask response, any WSGI app: it answers itself.
        return pass_through(result, environ, start_response)
    elif type(result) not in _PLAIN and is_cloud_event(result):
        return send_cloud_event(result, res, environ, start_response)
    else:
        body = result
    if status is None:
        status = res.status_code if res is not None else 200
    if type(body) is str:  # the commonest body, encoded here: a call less
        data: bytes | Iterable[bytes] = body.encode()
        content_type = TEXT
    else:
        data, content_type = encode_body(body)
    headers: list[tuple[str, str]]
    own = res._headers if res is not None else None
    if not (own or extra_headers) and type(data) is bytes:  # the commonest answer: the body with its type and length
        type_field = TEXT_FIELD if content_type is TEXT else ("Content-Type", content_type)
        start_response(STATUS_LINES.get(status) or status_line(status), [type_field, ("Content-Length", str(len(data)))])
        return [] if environ.get("REQUEST_METHOD") == "HEAD" else [data]
    if own or extra_headers:
        merged = new_headers(own) if own else new_headers()
        if extra_headers:
            items = extra_headers.items() if isinstance(extra_headers, dict) else extra_headers
            for name, value in items:
                merged.set(name, value)
        if "Content-Type" not in merged:
            merged.add("Content-Type", content_type)
        if type(data) is bytes:
            merged.remove("Content-Length")  # the runtime counts the bytes it sends
        headers = merged.to_wsgi_list()
    else:
        headers = [("Content-Type", content_type)]
    if isinstance(data, bytes):
        headers.append(("Content-Length", str(len(data))))
        start_response(status_line(status), headers)
        if environ.get("REQUEST_METHOD") == "HEAD":
            return []
        return [data]
    start_response(status_line(status), headers)
    return data  # a stream


_PLAIN = frozenset({str, bytes, dict, list})


def pass_through(app: Any, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
    """The response of a WSGI app the function returned, started while the function's call lasts.

    A generator app starts its response only when first iterated; that first
    step is taken here, so the layers around the function (the timeout, the
    error page) see a started response like any other.
    """
    started = False

    def start(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
        nonlocal started
        started = True
        return start_response(status, headers, exc_info) if exc_info is not None else start_response(status, headers)

    body: Iterable[bytes] = app(environ, start)
    if started:
        return body
    chunks = iter(body)
    try:
        first = next(chunks, None)
    except BaseException:
        _close(body)
        raise
    return _Prepended(first, chunks, body)


class _Prepended:
    """A body whose first chunk was already taken, then the rest; closing closes the original."""

    def __init__(self, first: bytes | None, rest: Iterator[bytes], original: Iterable[bytes]) -> None:
        self.first = first
        self.rest = rest
        self.original = original

    def __iter__(self) -> Iterator[bytes]:
        if self.first is not None:
            yield self.first
        yield from self.rest

    def close(self) -> None:
        _close(self.original)


def _close(body: Any) -> None:
    close = getattr(body, "close", None)
    if close is not None:
        close()


def send_cloud_event(event: Any, res: FunctionResponse | None, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
    """A returned CloudEvent is the reply, in binary content mode (the Knative convention).

    The status and headers set on ``res`` are kept; the event's ``ce-*``
    headers and content type win over them.
    """
    event_headers, data = to_binary(event)
    merged = new_headers(res._headers) if res is not None and res._headers else new_headers()
    for name, value in event_headers.items():
        merged.set(name, value)
    merged.set("Content-Length", str(len(data)))
    start_response(status_line(res.status_code if res is not None else 200), merged.to_wsgi_list())
    return [] if environ.get("REQUEST_METHOD") == "HEAD" else [data]
