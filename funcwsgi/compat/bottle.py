"""The request as Kubeless and Kyma <=3.12 functions received it: bottle's names.

Those runtimes served functions with bottle and handed them bottle's request as
``event['extensions']['request']``. :class:`BottleRequest` offers what
functions commonly used of it (``method``, ``headers``, ``query``, ``forms``,
``params``, ``body.read()``, ``json``, ``get_header()``, ``get_cookie()``) over
the call's werkzeug request; any other attribute is the werkzeug request's
(``args``, ``get_data()``, ``get_json()``, ``path``, ...). Nothing is parsed
until it is used.

For functions whose module imports bottle itself, :func:`bottle_invoker` binds
bottle's thread-local request and response to the call, so such functions may
read ``bottle.request``, set ``bottle.response.status`` or headers, and return
or raise ``bottle.HTTPResponse`` / ``HTTPError`` (``bottle.abort(404)``), and
turns what the function left there into the HTTP response. bottle itself is
imported only for those functions.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from werkzeug.datastructures import ImmutableMultiDict, MultiDict
from werkzeug.exceptions import BadRequest

from ..request import FunctionRequest, get_or_create_request, has_body, loads_json
from ..signatures import Invoker

if TYPE_CHECKING:
    import bottle

#: The content types bottle's ``request.json`` decodes.
BOTTLE_JSON_TYPES = frozenset({"application/json", "application/json-rpc"})


class Body(bytes):
    """The body as ``bytes`` that can also be read like bottle's ``request.body`` file.

    ``request.body.read()`` (bottle) and ``request.body.decode()`` (bytes) both
    work; reads advance a position, ``seek(0)`` rewinds it.
    """

    _position = 0

    def read(self, size: int | None = -1) -> bytes:
        start = self._position
        end = len(self) if size is None or size < 0 else min(len(self), start + size)
        self._position = end
        return bytes(self[start:end])

    def readline(self, size: int | None = -1) -> bytes:
        start = self._position
        newline = self.find(b"\n", start)
        end = len(self) if newline < 0 else newline + 1
        if size is not None and size >= 0:
            end = min(end, start + size)
        self._position = end
        return bytes(self[start:end])

    def readlines(self) -> list[bytes]:
        lines = []
        while line := self.readline():
            lines.append(line)
        return lines

    def seek(self, offset: int, whence: int = 0) -> int:
        base = {0: 0, 1: self._position, 2: len(self)}[whence]
        self._position = max(0, min(len(self), base + offset))
        return self._position

    def tell(self) -> int:
        return self._position

    def getvalue(self) -> bytes:
        return bytes(self)

    def close(self) -> None:
        """Nothing to release; bottle's body file could be closed."""


class FormsDict(ImmutableMultiDict[str, str]):
    """bottle's ``FormsDict``: a multi-dict whose keys are also attributes.

    ``request.query.name`` is the first value of ``name``, or ``''`` when the
    parameter is missing, as bottle gave it.
    """

    def __getattr__(self, name: str) -> str:
        if name.startswith("__"):
            raise AttributeError(name)
        return self.get(name, "")

    def getall(self, key: str) -> list[str]:
        return self.getlist(key)

    def getunicode(self, name: str, default: str | None = None) -> str | None:
        return self.get(name, default)


class BottleHeaders(Mapping[str, str]):
    """bottle's header dict: iterating gives the names, lookups ignore case."""

    __slots__ = ("_headers",)

    def __init__(self, headers: Any) -> None:
        self._headers = headers

    def __getitem__(self, name: str) -> str:
        value = self._headers.get(name)
        if value is None:
            raise KeyError(name)
        return str(value)

    def get(self, name: str, default: Any = None) -> Any:
        return self._headers.get(name, default)

    def getall(self, name: str) -> list[str]:
        return list(self._headers.getlist(name))

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self._headers

    def __iter__(self) -> Iterator[str]:
        return iter(self._headers.keys())

    def __len__(self) -> int:
        return len(self._headers)

    def raw(self, name: str, default: Any = None) -> Any:
        return self._headers.get(name, default)

    def __repr__(self) -> str:
        return f"BottleHeaders({dict(self.items())!r})"


class BottleRequest:
    """bottle's request API over a :class:`~funcwsgi.request.FunctionRequest`."""

    __slots__ = ("_request",)

    def __init__(self, request: FunctionRequest) -> None:
        self._request = request

    def __getattr__(self, name: str) -> Any:
        # Everything bottle had under the same name in werkzeug (method, path, url,
        # cookies, files, remote_addr, environ, content_type...) and werkzeug's own API.
        return getattr(self._request, name)

    @property
    def method(self) -> str:
        return self._request.method

    @property
    def headers(self) -> BottleHeaders:
        return BottleHeaders(self._request.headers)

    def get_header(self, name: str, default: Any = None) -> Any:
        return self._request.headers.get(name, default)

    @property
    def query(self) -> FormsDict:
        return FormsDict(self._request.args)

    GET = query

    @property
    def forms(self) -> FormsDict:
        return FormsDict(self._request.form)

    POST = forms

    @property
    def params(self) -> FormsDict:
        merged: MultiDict[str, str] = MultiDict(self._request.args)
        for key, value in self._request.form.items(multi=True):
            merged.add(key, value)
        return FormsDict(merged)

    @property
    def body(self) -> Body:
        return Body(self._request.get_data())

    @property
    def json(self) -> Any:
        """The decoded body for a JSON content type, else ``None`` (bottle's rule).

        A body that is not valid JSON answers 400 for the function, as bottle did.
        """
        if self._request.mimetype not in BOTTLE_JSON_TYPES:
            return None
        raw = self._request.get_data()
        if not raw:
            return None
        try:
            return loads_json(raw)
        except ValueError:
            raise BadRequest("The request body is not valid JSON.") from None

    @property
    def query_string(self) -> str:
        return self._request.query_string.decode("latin-1")

    @property
    def fullpath(self) -> str:
        return self._request.root_path + self._request.path

    def get_cookie(self, name: str, default: Any = None) -> Any:
        return self._request.cookies.get(name, default)

    def __repr__(self) -> str:
        return f"<BottleRequest {self._request.method} {self._request.path}>"


TEXT = "text/plain; charset=utf-8"


def bottle_invoker(call: Callable[[dict[str, Any]], Any]) -> Invoker[None]:
    """Wrap ``call(environ) -> result`` with bottle's request and response bound."""
    import bottle  # here: only functions that import bottle themselves need it

    def invoke(environ: dict[str, Any]) -> tuple[Any, None]:
        # bottle reads the body from this key when present: the bytes the
        # runtime's request already holds, so both see the same body.
        if has_body(environ):
            environ["bottle.request.body"] = io.BytesIO(get_or_create_request(environ).get_data())
        bottle.request.bind(environ)
        bottle.response.bind()
        try:
            result = call(environ)
        except bottle.HTTPResponse as raised:  # bottle.abort(), raise HTTPResponse(...)
            return from_bottle_response(raised), None
        if isinstance(result, bottle.HTTPResponse):
            return from_bottle_response(result), None
        return with_bottle_response_state(result, bottle.response), None

    return invoke


def from_bottle_response(response: bottle.HTTPResponse) -> tuple[Any, int, list[tuple[str, str]]]:
    """(body, status, headers) of a returned or raised bottle response."""
    import bottle

    headers = _explicit_headers(response)
    body = response.body
    if isinstance(response, bottle.HTTPError):
        # bottle rendered an HTML error page around the message; plain text here.
        body = "" if body is None else str(body)
        headers = [(k, v) for k, v in headers if k.lower() != "content-type"] + [("Content-Type", TEXT)]
    return body, response.status_code, headers


def with_bottle_response_state(result: Any, response: Any) -> Any:
    """The result, with the status and headers the function set on ``bottle.response``."""
    if response.status_code == 200 and not response._headers and not response._cookies:
        return result  # the common case: the function left bottle's response alone
    headers = _explicit_headers(response)
    status = response.status_code
    if type(result) is tuple:
        return result  # the function said it all in the tuple
    return result, status, headers


def _explicit_headers(response: Any) -> list[tuple[str, str]]:
    """Headers the function set, without bottle's default Content-Type and lengths."""
    default_type = "Content-Type" not in response.headers
    return [
        (name, value)
        for name, value in response.headerlist
        if name.lower() != "content-length" and not (default_type and name == "Content-Type")
    ]
