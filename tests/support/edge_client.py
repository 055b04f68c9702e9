"""A test client that serves each request as funcwsgi's gunicorn worker runs a call, in this process.

The edge's call runner (``funcwsgi/adapters/gunicorn/calls.py``) takes the stack's answer through the
call's own ``start_response`` (:attr:`funcwsgi.serving.ServerCall.takes_answer`), so the layers read the
status from it and add their fields to it rather than wrap ``start_response``; a layer's tests run
through this client and through werkzeug's test client, which gives no server call, to check both ways
answer alike. No sockets and no HTTP framing: those are the edge's own tests'.
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import Iterator, Mapping
from typing import Any

from werkzeug.wrappers import Response

from funcwsgi.adapters.gunicorn.calls import CallRunner, EdgeCall, address_fields, make_environ
from funcwsgi.serving import SERVER_CALL_KEY


class Exchange:
    """The request as the edge hands it to the runner: the fields make_environ reads, the answer's pieces collected."""

    def __init__(self, method: str, target: str, headers: Mapping[str, str], body: bytes) -> None:
        self.method = method
        self.target = target.encode("latin-1")
        self.http_version = "1.1"
        self.headers = [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in headers.items()]
        if body:
            self.headers.append((b"content-length", str(len(body)).encode("ascii")))
        self.peer = ("127.0.0.1", 40000)
        self.address = address_fields(("127.0.0.1", 8080), self.peer)
        self.body_skipped = False
        self.client_gone = False
        self.sent: list[bytes] = []
        self.head: tuple[str, list[tuple[str, str]]] | None = None
        self.content = body
        self.done = False

    def body(self) -> io.BytesIO:
        return io.BytesIO(self.content)

    def respond(self, status: str, headers: list[tuple[str, str]], chunks: Any, end: bool) -> None:
        self.head = (status, headers)
        self.sent.extend(chunks)

    def abort(self, answer: Any) -> None:
        self.client_gone = True

    def finished(self) -> None:
        self.done = True

    def pending(self) -> int:
        return 0


class Answer(Response):
    """An answer, read as werkzeug's test client's are."""

    @property
    def text(self) -> str:
        return self.get_data(as_text=True)


class EdgeClient:
    """``get``/``post``/``open`` as werkzeug's test client has them; each answer a werkzeug :class:`Response`."""

    def __init__(self, service: Any) -> None:
        self.application = service
        self.loop = asyncio.new_event_loop()
        self.runner = CallRunner(service, 1, self.loop, 1.0)
        self.runner.send_from_thread = self.sent  # type: ignore[method-assign]  # streamed pieces: collected here

    def sent(self, exchange: Exchange, status: str, headers: list[tuple[str, str]], chunk: bytes, end: bool) -> None:
        exchange.head = (status, headers)
        exchange.sent.append(chunk)

    def open(self, path: str, method: str = "GET", headers: Mapping[str, str] | None = None, data: bytes = b"", buffered: bool = True) -> Answer:
        exchange = Exchange(method, path, headers or {}, data)
        call = EdgeCall(exchange, self.runner)  # type: ignore[arg-type]  # the fields an exchange has that a call reads
        environ = make_environ(self.runner.base_environ, exchange)  # type: ignore[arg-type]
        environ[SERVER_CALL_KEY] = call
        body = self.runner.call_wsgi(call, environ)
        if body is not None:
            return Answer(b"".join(body), call.status, call.headers)
        assert exchange.head is not None, "a streamed answer that never started"
        return Answer(b"".join(exchange.sent), *exchange.head)

    def get(self, path: str, **options: Any) -> Answer:
        return self.open(path, "GET", **options)

    def post(self, path: str, **options: Any) -> Answer:
        return self.open(path, "POST", **options)

    def head(self, path: str, **options: Any) -> Answer:
        return self.open(path, "HEAD", **options)

    def close(self) -> None:
        self.runner.shutdown()
        self.loop.close()


def edge_client(service: Any) -> Iterator[EdgeClient]:
    """A fixture's body: the client, closed after."""
    client = EdgeClient(service)
    try:
        yield client
    finally:
        client.close()
