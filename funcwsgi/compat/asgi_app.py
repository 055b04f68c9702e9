"""An ASGI app as the function: ``async def handle(scope, receive, send)``, the shape Knative's func-python serves.

The app runs inside the stack like any function: the layers see its call,
its status and its body. It gets the call's ASGI scope (on the event-loop
path the server's own, else one made from the WSGI environ), the whole
request body as one ``http.request`` message, and what it sends becomes the
response. The response is gathered, then sent: an ASGI function that
streams a long response is answered once it has finished.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..environ import ASGI_SCOPE_KEY

if TYPE_CHECKING:
    from ..loader import LoadedFunction
    from ..signatures import Invoker


def scope_of(environ: dict[str, Any]) -> dict[str, Any]:
    """The call's ASGI scope: the server's own on the loop path, else one made from the WSGI environ."""
    scope = environ.get(ASGI_SCOPE_KEY)
    if scope is not None:
        return dict(scope)
    headers = [
        (key[5:].replace("_", "-").lower().encode("latin-1"), value.encode("latin-1"))
        for key, value in environ.items()
        if key.startswith("HTTP_")
    ]
    for key, name in (("CONTENT_TYPE", b"content-type"), ("CONTENT_LENGTH", b"content-length")):
        if environ.get(key):
            headers.append((name, environ[key].encode("latin-1")))
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": environ.get("SERVER_PROTOCOL", "HTTP/1.1").partition("/")[2] or "1.1",
        "method": environ.get("REQUEST_METHOD", "GET"),
        "scheme": environ.get("wsgi.url_scheme", "http"),
        "path": environ.get("PATH_INFO", "").encode("latin-1").decode("utf-8", "replace"),
        "raw_path": environ.get("PATH_INFO", "").encode("latin-1"),
        "query_string": environ.get("QUERY_STRING", "").encode("latin-1"),
        "root_path": environ.get("SCRIPT_NAME", ""),
        "headers": headers,
        "client": (environ.get("REMOTE_ADDR", ""), int(environ.get("REMOTE_PORT") or 0)),
        "server": (environ.get("SERVER_NAME", ""), int(environ.get("SERVER_PORT") or 0)),
    }


class Gathered:
    """What the ASGI app sent: its status, headers and body."""

    def __init__(self) -> None:
        self.status = 500
        self.headers: list[tuple[str, str]] = []
        self.chunks: list[bytes] = []
        self.started = False

    async def send(self, message: dict[str, Any]) -> None:
        kind = message["type"]
        if kind == "http.response.start":
            self.started = True
            self.status = int(message["status"])
            self.headers = [(name.decode("latin-1"), value.decode("latin-1")) for name, value in message.get("headers", ())]
        elif kind == "http.response.body":
            self.chunks.append(bytes(message.get("body", b"")))


def invoker(loaded: LoadedFunction) -> Invoker[None]:
    from ..eventloop.bridge import on_loop_path
    from ..eventloop.coroutines import await_on_loop, run_on_thread_loop

    app: Callable[..., Any] = loaded.function
    name = loaded.name

    def call_asgi(environ: dict[str, Any]) -> tuple[Any, None]:
        body = environ["wsgi.input"].read()
        delivered = False

        async def receive() -> dict[str, Any]:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": body, "more_body": False}
            return {"type": "http.disconnect"}

        gathered = Gathered()
        coroutine = app(scope_of(environ), receive, gathered.send)
        if on_loop_path():
            await_on_loop(coroutine, name)
        else:
            run_on_thread_loop(coroutine)
        if not gathered.started:
            raise RuntimeError(f"{name}() returned without sending http.response.start")
        headers = [(k, v) for k, v in gathered.headers if k.lower() != "content-length"]
        return (b"".join(gathered.chunks), gathered.status, headers), None

    return call_asgi
