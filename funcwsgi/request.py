"""The request object a function receives: a werkzeug request, built lazily."""

from __future__ import annotations

from typing import Any

from werkzeug.exceptions import BadRequest
from werkzeug.wrappers import Request


class FunctionRequest(Request):
    """werkzeug's :class:`~werkzeug.wrappers.Request`, with the names functions use.

    Everything werkzeug parses (``args``, ``form``, ``files``, ``headers``,
    ``get_json()``) is parsed on first access only, so a function that reads
    nothing pays for nothing.
    """

    @property
    def cloud_event(self) -> Any:
        """The incoming CloudEvent, decoded by the CloudEvents layer; ``None`` otherwise."""
        return self.environ.get("funcwsgi.cloud_event")

    @cloud_event.setter
    def cloud_event(self, event: Any) -> None:
        self.environ["funcwsgi.cloud_event"] = event

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
    request = environ.get("werkzeug.request")
    if isinstance(request, FunctionRequest):
        return request
    return FunctionRequest(environ)
