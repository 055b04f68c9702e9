"""The request object a function receives: werkzeug's request API, werkzeug imported on first use.

A function that never reads its request (a hello world, a cron-style job) never
imports werkzeug: about 100 million instructions of a cold start and 3.4 MB of
a worker's memory (docs/performance.md#start-up). One whose code reads it has
werkzeug imported at start (``handler.calling.make_invoker``). Either way the
first read of anything werkzeug provides makes the object a werkzeug request in
place, the very object the function holds, and from then on every call's
request is made one from the start.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .environ import CLOUD_EVENT_KEY

if TYPE_CHECKING:
    from werkzeug.wrappers import Request as RequestAPI  # what type checkers see: the API the object has when read
else:
    RequestAPI = object

#: Where werkzeug keeps a request in its environ, shared by everyone who asks for the call's request.
REQUEST_KEY = "werkzeug.request"


def loads_json(data: str | bytes) -> Any:
    """``json.loads``, with a body nested too deeply for the parser also a ``ValueError``.

    Python's parser recurses once per level, so a caller's ``[[[[...`` runs
    out of stack with a ``RecursionError``; as a ``ValueError`` it is what it
    is, a body that is not usable JSON (400, not 500).
    """
    try:
        return json.loads(data)
    except RecursionError:
        raise ValueError("the JSON document is nested too deeply") from None


class _JSON:
    """What werkzeug's ``get_json()`` parses with (``Request.json_module``)."""

    loads = staticmethod(loads_json)
    dumps = staticmethod(json.dumps)


class FunctionRequest(RequestAPI):
    """werkzeug's :class:`~werkzeug.wrappers.Request`, with the names functions use.

    Made without werkzeug: the first read of an attribute werkzeug provides
    imports it and makes this object a werkzeug request in place
    (``isinstance(req, werkzeug.wrappers.Request)`` holds from then on). Even
    then, what werkzeug's ``__init__`` computes (method, path, headers, ...) is
    computed on the first read of one of them, and what it parses (``args``,
    ``form``, ``files``, ``get_json()``) on first access: a function that reads
    nothing pays for nothing.
    """

    # werkzeug types json_module as the json module itself; any object with loads and dumps serves.
    json_module = _JSON  # type: ignore[assignment]

    def __init__(self, environ: dict[str, Any], populate_request: bool = True, shallow: bool = False) -> None:
        self.environ = environ
        self.shallow = shallow
        if populate_request and not shallow:
            environ[REQUEST_KEY] = self

    @property
    def cloud_event(self) -> Any:
        """The incoming CloudEvent, decoded by the CloudEvents layer; ``None`` otherwise."""
        return self.environ.get(CLOUD_EVENT_KEY)

    @cloud_event.setter
    def cloud_event(self, event: Any) -> None:
        self.environ[CLOUD_EVENT_KEY] = event

    def __getattr__(self, name: str) -> Any:
        # Only called for attributes not set yet.
        werkzeug_request, computed_in_init = werkzeug_parts()
        if not isinstance(self, werkzeug_request):
            return getattr(self.with_werkzeug_api(), name)
        if name in computed_in_init:
            # The first read of any value werkzeug's __init__ computes runs it once; values assigned before that win.
            assigned = {key: value for key, value in vars(self).items() if key in computed_in_init}
            werkzeug_request.__init__(self, self.environ, populate_request=False, shallow=self.shallow)
            vars(self).update(assigned)
            return vars(self)[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    # Special methods are looked up on the class, never through __getattr__: werkzeug's request has these.
    def __repr__(self) -> str:
        return super(FunctionRequest, self.with_werkzeug_api()).__repr__()

    def __enter__(self) -> FunctionRequest:
        super(FunctionRequest, self.with_werkzeug_api()).__enter__()
        return self

    def __exit__(self, exc_type, exc_value, tb) -> None:  # type: ignore[no-untyped-def]
        super(FunctionRequest, self.with_werkzeug_api()).__exit__(exc_type, exc_value, tb)

    def __dir__(self) -> list[str]:
        return list(super(FunctionRequest, self.with_werkzeug_api()).__dir__())

    def with_werkzeug_api(self) -> FunctionRequest:
        """This request, made a werkzeug request in place if it is not one yet."""
        if not isinstance(self, werkzeug_parts()[0]):
            self.__class__ = with_werkzeug()
        return self

    @property
    def body(self) -> bytes:
        """The raw request body (same as ``get_data()``)."""
        return self.get_data()

    def getData(self) -> bytes:  # noqa: N802 - the spelling of the API rework document
        return self.get_data()

    def on_json_loading_failed(self, e: ValueError | None) -> Any:
        # werkzeug's default puts the decoder's message in the response; keep it generic.
        from werkzeug.exceptions import BadRequest

        raise BadRequest("The request body is not valid JSON.")


_werkzeug_parts: tuple[type[Any], frozenset[str]] | None = None
_with_werkzeug: type[FunctionRequest] | None = None
#: werkzeug's modules import one another in a circle: two call threads importing them at once can each be handed
#: the other's half-made module (an ImportError, a 500). The first import is made by one thread at a time.
_werkzeug_import = threading.Lock()
#: Makes a call's request: :class:`FunctionRequest` until werkzeug is imported, then the class with its API
#: from the start (a request read once by a function that reads every call's would otherwise change class per call).
make_request: Callable[[dict[str, Any]], FunctionRequest] = FunctionRequest


def werkzeug_parts() -> tuple[type[Any], frozenset[str]]:
    """werkzeug's request class, and what its ``__init__`` computes from the environ (method, path, headers,
    ...), found by asking werkzeug itself rather than listing them here.

    The first call imports werkzeug, the whole package, under a lock: whoever needs one of its modules in a
    call thread calls this first, and then finds every module in ``sys.modules``.
    """
    global _werkzeug_parts
    if _werkzeug_parts is None:
        with _werkzeug_import:
            if _werkzeug_parts is None:
                from werkzeug.wrappers import Request

                _werkzeug_parts = Request, frozenset(vars(Request({}, populate_request=False))) - {"environ", "shallow"}
    return _werkzeug_parts


def with_werkzeug() -> type[FunctionRequest]:
    """:class:`FunctionRequest` with werkzeug's request as its base, made once; from then on calls make these."""
    global _with_werkzeug, make_request
    if _with_werkzeug is None:
        werkzeug_request = werkzeug_parts()[0]
        with _werkzeug_import:
            if _with_werkzeug is None:
                _with_werkzeug = type("FunctionRequest", (FunctionRequest, werkzeug_request), {"__module__": __name__, "__doc__": FunctionRequest.__doc__})
                make_request = _with_werkzeug
    return _with_werkzeug


def get_or_create_request(environ: dict[str, Any]) -> FunctionRequest:
    """The request for ``environ``, created once and shared by every caller."""
    request = environ.get(REQUEST_KEY)
    if isinstance(request, FunctionRequest):
        return request
    return make_request(environ)


def has_body(environ: dict[str, Any]) -> bool:
    """Whether the request carries a body, known without reading it."""
    return environ.get("CONTENT_LENGTH") not in (None, "", "0") or "HTTP_TRANSFER_ENCODING" in environ


def read_body(environ: dict[str, Any]) -> bytes:
    """The whole request body, read through ``wsgi.input`` (and so through the layers that guard it).

    For the wings that hand another platform's function its body as bytes.
    """
    stream = environ.get("wsgi.input")
    if stream is None:
        return b""
    length = str(environ.get("CONTENT_LENGTH") or "")
    if length.isdigit():
        return bytes(stream.read(int(length)))
    if environ.get("wsgi.input_terminated"):
        return bytes(stream.read())
    return b""  # no length and an unterminated stream: reading on would wait for the client forever
