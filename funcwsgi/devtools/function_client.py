"""Test a function without a server: request in, response out, as the runtime does it.

::

    from funcwsgi.testing import FunctionClient

    client = FunctionClient("path/to/function")       # the folder holding handler.py
    response = client.post("/", json={"name": "you"})
    assert response.status_code == 200
    assert response.json == {"message": "Hello, you!"}

    reply = client.cloud_event({"n": 1}, type="com.example.ping", source="/tests")
    assert reply.cloud_event.type == "com.example.pong"

The client builds the same application ``funcwsgi:app`` serves (the function is
loaded and checked the same way, through the same middleware stack) and calls
it through werkzeug's test client, so the function sees exactly what it sees
behind a server, and a failing function answers 500 as it would in production
(its traceback is logged).

The lifecycle hooks run as a server worker runs them: ``start()`` when the
client is made (one that raises makes the constructor raise the
:class:`~funcwsgi.errors.StartupError` a server would stop with), ``stop()``
when it is closed (``client.close()``, or the end of a ``with`` block; a
failing ``stop()`` is logged, as in production). ``ready()`` and ``alive()``
answer ``/health/readiness`` and ``/health/liveness``. What it does not do:
there is no server, so no socket, no worker processes and no forking, and
``SERVER_HOST``/``SERVER_PORT``/``SERVER_WORKERS`` have no effect.

::

    with FunctionClient("path/to/function") as client:   # start() ran
        assert client.get("/").status_code == 200
    # stop() ran
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from functools import cached_property
from types import TracebackType
from typing import Any, cast

from werkzeug.test import Client, TestResponse

from .. import cloudevents
from ..application import FunctionService, make_app
from ..cloudevents import CloudEvent
from ..process import run_start_hook, run_stop_hook, start_worker

__all__ = ["CloudEvent", "FunctionClient", "FunctionTestResponse"]


class FunctionTestResponse(TestResponse):
    """werkzeug's test response (``status_code``, ``headers``, ``text``, ``json``, ``data``) plus :attr:`cloud_event`."""

    @cached_property
    def cloud_event(self) -> CloudEvent | None:
        """The CloudEvent this response carries (binary or structured mode), or ``None``."""
        return cloudevents.decode(self.headers, self.get_data())


class FunctionClient:
    """Calls one function the way the runtime calls it.

    ``function`` is the folder holding the function's module (``handler.py``
    by default) or a callable. ``environ`` is the runtime's environment (its
    settings, e.g. ``{"SERVER_CALL_TIMEOUT": "2"}``); it is empty by default so
    a test does not depend on the shell it runs in. ``settings`` override
    settings by field name (``server_max_body_size=10``).
    """

    def __init__(
        self,
        function: str | os.PathLike[str] | Callable[..., Any] = ".",
        *,
        module: str = "handler",
        name: str = "main",
        environ: Mapping[str, str] | None = None,
        **settings: Any,
    ) -> None:
        environ = dict(environ or {})
        if callable(function):
            self.app: FunctionService = make_app(function, environ=environ, **settings)
        else:
            settings.setdefault("handler_folder", os.fspath(function))
            settings.setdefault("handler_module_name", module)
            settings.setdefault("handler_function_name", name)
            self.app = make_app(environ=environ, **settings)
        self.client = Client(self.app, response_wrapper=FunctionTestResponse)
        # What a worker does before it serves: per-process state (once per process), then start().
        start_worker(self.app)
        run_start_hook(self.app)
        self.closed = False

    def close(self) -> None:
        """Run the function's ``stop()``, as a worker does once it stops serving; once."""
        if not self.closed:
            self.closed = True
            run_stop_hook(self.app)

    def __enter__(self) -> FunctionClient:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None) -> None:
        self.close()

    def request(
        self,
        method: str,
        path: str = "/",
        *,
        json: Any = None,
        data: bytes | str | Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        query_string: str | Mapping[str, Any] | None = None,
        content_type: str | None = None,
    ) -> FunctionTestResponse:
        """Call the function with one HTTP request and return its response."""
        response = self.client.open(
            path,
            method=method.upper(),
            json=json,
            data=data,
            headers=dict(headers or {}),
            query_string=query_string,
            content_type=content_type,
        )
        return cast(FunctionTestResponse, response)  # the client's response_wrapper made it one

    def get(self, path: str = "/", **kwargs: Any) -> FunctionTestResponse:
        return self.request("GET", path, **kwargs)

    def post(self, path: str = "/", **kwargs: Any) -> FunctionTestResponse:
        return self.request("POST", path, **kwargs)

    def put(self, path: str = "/", **kwargs: Any) -> FunctionTestResponse:
        return self.request("PUT", path, **kwargs)

    def patch(self, path: str = "/", **kwargs: Any) -> FunctionTestResponse:
        return self.request("PATCH", path, **kwargs)

    def delete(self, path: str = "/", **kwargs: Any) -> FunctionTestResponse:
        return self.request("DELETE", path, **kwargs)

    def head(self, path: str = "/", **kwargs: Any) -> FunctionTestResponse:
        return self.request("HEAD", path, **kwargs)

    def options(self, path: str = "/", **kwargs: Any) -> FunctionTestResponse:
        return self.request("OPTIONS", path, **kwargs)

    def cloud_event(
        self,
        data: Any = None,
        *,
        type: str,
        source: str,
        id: str | None = None,
        subject: str | None = None,
        content_type: str | None = None,
        extensions: Mapping[str, str] | None = None,
        path: str = "/",
        headers: Mapping[str, str] | None = None,
    ) -> FunctionTestResponse:
        """POST ``data`` as a binary-mode CloudEvent; ``response.cloud_event`` decodes a CloudEvent reply."""
        event_headers, body = cloudevents.encode_binary(
            data, type=type, source=source, id=id, subject=subject, content_type=content_type, extensions=extensions
        )
        event_headers.update(headers or {})
        return self.request("POST", path, data=body, headers=event_headers)
