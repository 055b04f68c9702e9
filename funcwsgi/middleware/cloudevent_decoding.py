"""Incoming CloudEvents, decoded once per request before the function runs."""

from __future__ import annotations

import io
from collections.abc import Iterable
from typing import TYPE_CHECKING

from ..environ import CLOUD_EVENT_KEY
from ..replies import bad_request
from ..request import read_body

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

#: ``funcwsgi.cloudevents.STRUCTURED``, spelled out: that module is imported when an event arrives, not at start.
STRUCTURED = "application/cloudevents+json"


class CloudEventsMiddleware:
    """Decodes binary and structured CloudEvents into ``environ['funcwsgi.cloud_event']``.

    A request that claims to be a CloudEvent but is malformed gets ``400`` with
    a short reason and the function is not called. Requests that are no
    CloudEvent pass untouched, as do batches
    (``application/cloudevents-batch+json``): the function reads those itself.
    The body is read once and put back, so the function can still read it.
    """

    def __init__(self, app: WSGIApplication) -> None:
        self.app = app

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        content_type = environ.get("CONTENT_TYPE", "")
        if content_type and content_type.startswith(STRUCTURED):  # most calls without a body have no type: no call then
            headers = {"content-type": content_type}
        elif (  # a binary-mode CloudEvent claims one of its required attributes' headers at least;
            # spelt out: every call asks, and a generator costs more than the four lookups
            "HTTP_CE_SPECVERSION" in environ or "HTTP_CE_ID" in environ or "HTTP_CE_TYPE" in environ or "HTTP_CE_SOURCE" in environ
        ):
            headers = {key[5:].lower().replace("_", "-"): value for key, value in environ.items() if key.startswith("HTTP_CE_")}
            if content_type:
                headers["content-type"] = content_type
        else:
            return self.app(environ, start_response)
        from ..cloudevents import MalformedCloudEvent
        from ..cloudevents import from_http as decode

        body = read_body(environ)
        environ["wsgi.input"] = io.BytesIO(body)
        environ["CONTENT_LENGTH"] = str(len(body))
        try:
            environ[CLOUD_EVENT_KEY] = decode(headers, body)
        except MalformedCloudEvent as error:
            return bad_request(str(error))(environ, start_response)
        return self.app(environ, start_response)

    def __repr__(self) -> str:
        return "CloudEventsMiddleware()"

