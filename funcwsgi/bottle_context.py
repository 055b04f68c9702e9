"""Calling a Kubeless-era function that imports bottle, as bottle would have.

Kubeless and Kyma <=3.12 served ``main(event, context)`` inside bottle, so such
functions may read ``bottle.request``, set ``bottle.response.status`` or
headers, and return or raise ``bottle.HTTPResponse`` / ``HTTPError``
(``bottle.abort(404)``). For functions whose module imports bottle, the
runtime binds bottle's thread-local request and response to the call and turns
what the function left there into the HTTP response.

Imported only for functions whose module imports bottle.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

import bottle

from .legacy import has_body
from .request import get_or_create_request

Invoker = Callable[[dict[str, Any]], tuple[Any, None]]

TEXT = "text/plain; charset=utf-8"


def bottle_invoker(call: Callable[[dict[str, Any]], Any]) -> Invoker:
    """Wrap ``call(environ) -> result`` with bottle's request and response bound."""

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
