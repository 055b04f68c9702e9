"""The request object a function receives: a werkzeug request, built lazily."""

from __future__ import annotations

import json
from typing import Any

from werkzeug.exceptions import BadRequest
from werkzeug.wrappers import Request

from .environ import CLOUD_EVENT_KEY

#: Where werkzeug keeps a request in its environ, shared by everyone who asks for the call's request.
REQUEST_KEY = "werkzeug.request"
#: What werkzeug's ``Request.__init__`` computes from the environ (method, path,
#: headers, ...), found by asking werkzeug itself rather than listing them here.
_COMPUTED_IN_INIT = frozenset(vars(Request({}, populate_request=False))) - {"environ", "shallow"}


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


class FunctionRequest(Request):
    """werkzeug's :class:`~werkzeug.wrappers.Request`, with the names functions use.

    Everything werkzeug parses (``args``, ``form``, ``files``, ``headers``,
    ``get_json()``) is parsed on first access only, so a function that reads
    nothing pays for nothing.
    """

    # werkzeug types json_module as the json module itself; any object with loads and dumps serves.
    json_module = _JSON  # type: ignore[assignment]

    @property
    def cloud_event(self) -> Any:
        """The incoming CloudEvent, decoded by the CloudEvents layer; ``None`` otherwise."""
        return self.environ.get(CLOUD_EVENT_KEY)

    @cloud_event.setter
    def cloud_event(self, event: Any) -> None:
        self.environ[CLOUD_EVENT_KEY] = event

    def __init__(self, environ: dict[str, Any], populate_request: bool = True, shallow: bool = False) -> None:
        # werkzeug's __init__ decodes the path, the host and more for every request
        # (most of a hello world's cost); it runs on first use instead (__getattr__).
        self.environ = environ
        self.shallow = shallow
        if populate_request and not shallow:
            environ[REQUEST_KEY] = self

    def __getattr__(self, name: str) -> Any:
        # Only called for attributes not set yet: the first read of any value that
        # werkzeug's __init__ computes runs it once; values assigned before that win.
        if name in _COMPUTED_IN_INIT:
            assigned = {key: value for key, value in vars(self).items() if key in _COMPUTED_IN_INIT}
            Request.__init__(self, self.environ, populate_request=False, shallow=self.shallow)
            vars(self).update(assigned)
            return vars(self)[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    @property
    def body(self) -> bytes:
        """The raw request body (same as ``get_data()``)."""
        return self.get_data()

    def getData(self) -> bytes:  # noqa: N802 - the spelling of the API rework document
        return self.get_data()

    def on_json_loading_failed(self, e: ValueError | None) -> Any:
        # werkzeug's default puts the decoder's message in the response; keep it generic.
        raise BadRequest("The request body is not valid JSON.")


def get_or_create_request(environ: dict[str, Any]) -> FunctionRequest:
    """The request for ``environ``, created once and shared by every caller."""
    request = environ.get(REQUEST_KEY)
    if isinstance(request, FunctionRequest):
        return request
    return FunctionRequest(environ)


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
