"""The request as Kubeless and Kyma <=3.12 functions received it: bottle's names.

Those runtimes served functions with bottle and handed them bottle's request as
``event['extensions']['request']``. :class:`BottleRequest` offers what
functions commonly used of it (``method``, ``headers``, ``query``, ``forms``,
``files``, ``params``, ``body.read()``, ``json``, ``get_header()``, ``get_cookie()``) over
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

import base64
import binascii
import functools
import io
import os
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping, MutableMapping
from typing import IO, TYPE_CHECKING, Any
from urllib.parse import SplitResult, urljoin
from urllib.parse import quote as url_quote

from werkzeug.datastructures import Headers
from werkzeug.exceptions import BadRequest

from ..handler.signatures import Invoker
from ..request import FunctionRequest, get_or_create_request, has_body, loads_json
from .wsgi_text import utf8

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


class FormsDict(MutableMapping[str, Any]):
    """bottle's ``FormsDict``: a multi-dict whose keys are also attributes.

    As in bottle, a key gives its most recent value (``request.query.name``,
    ``query['name']``, ``query.get('name')``; ``get(key, default, index, type)``),
    ``getall(key)`` every value, and a missing attribute is ``''``.
    werkzeug's ``getlist`` and ``to_dict`` are there too.
    """

    def __init__(self, pairs: Iterable[tuple[str, Any]] = ()) -> None:
        self.dict: dict[str, list[Any]] = {}
        for key, value in pairs:
            self.dict.setdefault(key, []).append(value)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return self.getunicode(name, default="")

    def __getitem__(self, key: str) -> Any:
        return self.dict[key][-1]

    def __setitem__(self, key: str, value: Any) -> None:
        self.dict.setdefault(key, []).append(value)

    def __delitem__(self, key: str) -> None:
        del self.dict[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.dict)

    def __len__(self) -> int:
        return len(self.dict)

    def __contains__(self, key: object) -> bool:
        return key in self.dict

    def get(self, key: str, default: Any = None, index: int = -1, type: Callable[[Any], Any] | None = None) -> Any:  # noqa: A002 - bottle's names
        try:
            value = self.dict[key][index]
            return type(value) if type else value
        except Exception:  # bottle: a missing key, a bad index or a failed cast all give the default
            return default

    getone = get

    def getall(self, key: str) -> list[Any]:
        return list(self.dict.get(key, ()))

    getlist = getall

    def getunicode(self, name: str, default: Any = None, encoding: str | None = None) -> Any:
        return self.dict[name][-1] if name in self.dict else default

    def append(self, key: str, value: Any) -> None:
        self.dict.setdefault(key, []).append(value)

    def replace(self, key: str, value: Any) -> None:
        self.dict[key] = [value]

    def allitems(self) -> list[tuple[str, Any]]:
        return [(key, value) for key, values in self.dict.items() for value in values]

    iterallitems = allitems

    def decode(self, encoding: str | None = None) -> FormsDict:
        return FormsDict(self.allitems())

    def to_dict(self, flat: bool = True) -> dict[str, Any]:
        return {key: values[-1] if flat else list(values) for key, values in self.dict.items()}

    def __repr__(self) -> str:
        return f"FormsDict({self.allitems()!r})"


class BottleHeaders(Mapping[str, str]):
    """bottle's header dict: iterating gives the names, lookups ignore case.

    Over the request's (WSGI) headers, values are read as UTF-8, as bottle's
    ``WSGIHeaderDict`` reads them; :meth:`raw` gives the environ's string.
    An ordinary object (no ``__slots__``): Kyma's own test functions print
    ``vars(request.headers)``.
    """

    def __init__(self, headers: Any) -> None:
        self.environ = getattr(headers, "environ", None)
        self._headers = headers

    def _text(self, value: Any) -> Any:
        return utf8(value) if self.environ is not None and isinstance(value, str) else value

    def __getitem__(self, name: str) -> str:
        value = self._headers.get(name)
        if value is None:
            raise KeyError(name)
        return str(self._text(value))

    def get(self, name: str, default: Any = None) -> Any:
        value = self._headers.get(name)
        return default if value is None else self._text(value)

    def getall(self, name: str) -> list[str]:
        return [self._text(value) for value in self._headers.getlist(name)]

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


class FileUpload:
    """bottle's ``FileUpload``: one file of a ``multipart/form-data`` body.

    ``name`` is the form field, ``raw_filename`` the name as the client sent
    it, :attr:`filename` that name made safe for a file system the way bottle
    makes it; ``file`` is the open file, ``headers`` the part's headers.
    """

    def __init__(self, file: IO[bytes], name: str, filename: str, headers: Any = None) -> None:
        self.file = file
        self.name = name
        self.raw_filename = filename
        self.headers = BottleHeaders(headers if headers is not None else Headers())

    @property
    def content_type(self) -> str | None:
        value: str | None = self.headers.get("Content-Type")
        return value

    @property
    def content_length(self) -> int:
        try:
            return int(self.headers.get("Content-Length"))
        except (TypeError, ValueError):
            return -1

    def get_header(self, name: str, default: Any = None) -> Any:
        return self.headers.get(name, default)

    @functools.cached_property
    def filename(self) -> str:
        """ASCII letters, digits, ``-``, ``_`` and ``.`` only, accents dropped, no folders,
        whitespace as one dash, no leading or trailing dots or dashes, at most 255
        characters; ``'empty'`` when nothing is left."""
        name = unicodedata.normalize("NFKD", self.raw_filename or "").encode("ascii", "ignore").decode("ascii")
        name = os.path.basename(name.replace("\\", "/"))
        name = _UNSAFE_FILENAME.sub("", name).strip()
        name = _DASHES.sub("-", name).strip(".-")
        return name[:255] or "empty"

    def save(self, destination: str | os.PathLike[str] | IO[bytes], overwrite: bool = False, chunk_size: int = 2**16) -> None:
        """Write the file to ``destination``: a path, a folder (the file keeps :attr:`filename`) or an open file.

        An existing file is kept, and ``OSError('File exists.')`` raised, unless ``overwrite``.
        """
        if isinstance(destination, (str, os.PathLike)):
            path = os.fspath(destination)
            if os.path.isdir(path):
                path = os.path.join(path, self.filename)
            if not overwrite and os.path.exists(path):
                raise OSError("File exists.")
            with open(path, "wb") as target:
                self._copy_to(target, chunk_size)
        else:
            self._copy_to(destination, chunk_size)

    def _copy_to(self, target: IO[bytes], chunk_size: int) -> None:
        start = self.file.tell()
        while chunk := self.file.read(chunk_size):
            target.write(chunk)
        self.file.seek(start)  # as bottle: the upload can be saved again

    def __repr__(self) -> str:
        return f"<FileUpload {self.name}={self.raw_filename!r}>"


_UNSAFE_FILENAME = re.compile(r"[^a-zA-Z0-9-_.\s]")
_DASHES = re.compile(r"[-\s]+")


def _upload(key: str, storage: Any) -> FileUpload:
    return FileUpload(storage.stream, key, storage.filename or "", storage.headers)


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
        return self.headers.get(name, default)

    @property
    def query(self) -> FormsDict:
        return FormsDict(self._request.args.items(multi=True))

    GET = query

    @property
    def forms(self) -> FormsDict:
        """The form fields of a url-encoded or multipart body, files not included."""
        return FormsDict(self._request.form.items(multi=True))

    @property
    def files(self) -> FormsDict:
        """The uploaded files of a multipart body, as :class:`FileUpload` objects."""
        return FormsDict((key, _upload(key, storage)) for key, storage in self._request.files.items(multi=True))

    @property
    def POST(self) -> FormsDict:  # noqa: N802 - bottle's name
        """Form fields and files together, as bottle's ``request.POST``."""
        return FormsDict([*self._request.form.items(multi=True), *self.files.allitems()])

    @property
    def params(self) -> FormsDict:
        """The query and the form fields (no files)."""
        return FormsDict([*self._request.args.items(multi=True), *self._request.form.items(multi=True)])

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

    # -- names werkzeug has too, with bottle's meaning -----------------------------

    @property
    def path(self) -> str:
        """``PATH_INFO`` with exactly one leading slash, read as UTF-8 (as bottle re-decodes it)."""
        return "/" + utf8(str(self._request.environ.get("PATH_INFO", ""))).lstrip("/")

    @property
    def script_name(self) -> str:
        """Where the app is mounted, with leading and trailing slashes (``'/'`` when at the root)."""
        name = self._request.environ.get("SCRIPT_NAME", "").strip("/")
        return "/" + name + "/" if name else "/"

    @property
    def fullpath(self) -> str:
        return urljoin(self.script_name, self.path.lstrip("/"))

    @property
    def urlparts(self) -> SplitResult:
        """The URL as (scheme, host, path, query, ''), honouring ``X-Forwarded-Proto``/``-Host`` as bottle did."""
        environ = self._request.environ
        scheme = environ.get("HTTP_X_FORWARDED_PROTO") or environ.get("wsgi.url_scheme", "http")
        host = environ.get("HTTP_X_FORWARDED_HOST") or environ.get("HTTP_HOST")
        if not host:
            host = environ.get("SERVER_NAME", "127.0.0.1")
            port = environ.get("SERVER_PORT")
            if port and port != ("80" if scheme == "http" else "443"):
                host += ":" + port
        return SplitResult(scheme, host, url_quote(self.fullpath), str(environ.get("QUERY_STRING", "")), "")

    @property
    def url(self) -> str:
        return self.urlparts.geturl()

    @property
    def content_type(self) -> str:
        """The ``Content-Type`` header in lower case, ``''`` when absent."""
        return str(self._request.environ.get("CONTENT_TYPE", "")).lower()

    @property
    def content_length(self) -> int:
        """The declared body length, ``-1`` when not declared."""
        return int(self._request.environ.get("CONTENT_LENGTH") or -1)

    @property
    def remote_route(self) -> list[str]:
        """The client and the proxies in between, from ``X-Forwarded-For`` (a client can forge it)."""
        forwarded = self._request.environ.get("HTTP_X_FORWARDED_FOR")
        if forwarded:
            return [address.strip() for address in forwarded.split(",")]
        remote = self._request.environ.get("REMOTE_ADDR")
        return [remote] if remote else []

    @property
    def remote_addr(self) -> str | None:
        route = self.remote_route
        return route[0] if route else None

    @property
    def auth(self) -> tuple[str, str | None] | None:
        """Basic authentication as (user, password); (``REMOTE_USER``, None); else None."""
        header = self._request.environ.get("HTTP_AUTHORIZATION", "")
        try:
            method, data = header.split(None, 1)
            if method.lower() == "basic":
                user, password = base64.b64decode(data.encode()).decode("utf-8", "replace").split(":", 1)
                return user, password
        except (ValueError, binascii.Error):
            pass
        remote_user = self._request.environ.get("REMOTE_USER")
        return (str(remote_user), None) if remote_user else None

    @property
    def is_xhr(self) -> bool:
        return str(self._request.environ.get("HTTP_X_REQUESTED_WITH", "")).lower() == "xmlhttprequest"

    is_ajax = is_xhr

    @property
    def chunked(self) -> bool:
        return "chunked" in str(self._request.environ.get("HTTP_TRANSFER_ENCODING", "")).lower()

    @property
    def cookies(self) -> FormsDict:
        return FormsDict(self._request.cookies.items(multi=True))

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
        path = environ.get("PATH_INFO", "")
        if path.isascii():
            bottle.request.bind(environ)
        else:
            # bottle's app re-decodes PATH_INFO as UTF-8 before routing (keeping the WSGI string as
            # bottle.raw_path); bottle.request sees that, the runtime's environ keeps PEP 3333's string.
            bottle.request.bind({**environ, "bottle.raw_path": path, "PATH_INFO": utf8(path)})
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
