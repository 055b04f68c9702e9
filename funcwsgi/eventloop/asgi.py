"""The event-loop edge: an ASGI application that serves a call through the same stack as WSGI.

:class:`AsgiService` turns each ASGI ``http`` call into the WSGI environ
the layers read, runs the service's one stack in a greenlet
(:mod:`funcwsgi.eventloop.bridge`) and sends what it answers. Nothing of errors,
request ids, reserved routes, CORS, tracing, metrics, the body limit, the
timeout, CloudEvents or the access log is written twice: only the two ends
of the call differ. Admission on the loop and the watch on a blocked loop
are :mod:`funcwsgi.eventloop.gate`'s, shared with a server that runs its
calls on the loop without ASGI in between.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, Protocol

from ..environ import ASGI_RECEIVE_KEY, ASGI_SCOPE_KEY, CONFIG_KEY, HEADER_KEYS, header_key
from ..middleware.http_rules import HttpRulesMiddleware, answer_fields, refused_host
from ..replies import BUSY, INVALID_HOST, Reply
from ..serving import SERVER_CALL_KEY, TASK, Lent, run_after_response
from .bridge import run_bridged, wait_for
from .gate import LoopGate

log = logging.getLogger("funcwsgi")

class FunctionService(Protocol):
    """What the edge needs of :class:`funcwsgi.application.FunctionService`: its configuration, its function and its stack."""

    config: Any
    loaded: Any
    wsgi: Any


Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

INTERNAL_ERROR = Reply(500, "Internal Server Error")


class LoopCall:
    """What the edge gives a call (:class:`funcwsgi.serving.ServerCall`): a task on the loop."""

    __slots__ = ("scope", "gone", "later")
    lent: Lent = TASK
    #: The deadline cancels the call's task, and the edge answers through the response.
    answers_now = False
    checks_http2 = False
    keeps_http_rules = True  # AsgiService.serve, through _Exchange
    takes_answer = False
    own_context = False

    def __init__(self, scope: Scope) -> None:
        self.scope = scope
        self.gone = False  # the server said http.disconnect
        self.later: list[Callable[[], object]] | None = None

    def answer_now(self, status: str, headers: Any, body: bytes) -> None:
        raise OSError("a call on the event loop is answered through its response")

    def client_connected(self) -> bool:
        return not self.gone

    def peer(self) -> tuple[str, int] | None:
        client = self.scope.get("client")
        return (str(client[0]), int(client[1])) if client else None

    def after_response(self, work: Callable[[], object]) -> None:
        if self.later is None:
            self.later = []
        self.later.append(work)

    def thread_stuck(self, extra_threads: int) -> None:
        pass

    def thread_back(self, extra_threads: int) -> None:
        pass


class ClientLeft(BaseException):
    """The request's body will never come whole (the server refused its framing, or the client left mid-body).

    A BaseException, as the loop's cancellation is: no layer and no function
    answers it or runs on the part of the body that came. The call ends
    quietly; the server has closed the connection (after its own 400, if it
    refused the framing).
    """


class AsgiInput:
    """``wsgi.input`` of a call on the loop: the ASGI body messages, read through the bridge as they arrive."""

    __slots__ = ("_receive", "_buffer", "_more", "_call", "interrupted")

    def __init__(self, receive: Receive, call: LoopCall | None = None) -> None:
        self._receive = receive
        self._buffer = bytearray()
        self._more = True
        self._call = call
        #: The body ended because the client went away (or broke off its stream), not because it was whole.
        self.interrupted = False

    def _fill(self) -> None:
        message = wait_for(self._receive())
        if message["type"] == "http.request":
            self._buffer += message.get("body", b"")
            self._more = message.get("more_body", False)
        else:  # http.disconnect: the client is gone, the body ends here
            more, self._more = self._more, False
            self.interrupted = True
            if self._call is not None:
                self._call.gone = True
            if more:  # before the body ended: refused by the server, or the client left mid-body
                raise ClientLeft

    def read(self, size: int | None = -1) -> bytes:
        if size is None or size < 0:
            while self._more:
                self._fill()
            size = len(self._buffer)
        else:
            while self._more and len(self._buffer) < size:
                self._fill()
        data = bytes(self._buffer[:size])
        del self._buffer[:size]
        return data

    def readline(self, size: int | None = -1) -> bytes:
        while self._more and b"\n" not in self._buffer and (size is None or size < 0 or len(self._buffer) < size):
            self._fill()
        end = self._buffer.find(b"\n") + 1 or len(self._buffer)
        if size is not None and size >= 0:
            end = min(end, size)
        return self.read(end)

    def readlines(self, hint: int = -1) -> list[bytes]:
        return list(self)

    def __iter__(self) -> Any:
        while True:
            line = self.readline()
            if not line:
                return
            yield line

    def preload(self) -> None:
        """Read the rest of the body now, so code outside the bridge (the function's own task) can read it."""
        while self._more:
            self._fill()


#: The part of an environ that depends only on the server end of the connection, by that end.
_TEMPLATES: dict[tuple[Any, ...], dict[str, Any]] = {}


def _template(scope: Scope) -> dict[str, Any]:
    server = scope.get("server") or ("localhost", 80)
    scheme = scope.get("scheme", "http")
    version = scope.get("http_version", "1.1")
    root = scope.get("root_path", "")
    end = (server[0], server[1], scheme, version, root)
    template = _TEMPLATES.get(end)
    if template is None:
        template = {
            "SCRIPT_NAME": root.encode().decode("latin-1"),
            "SERVER_NAME": str(server[0]),
            "SERVER_PORT": str(server[1]) if server[1] is not None else "80",
            "SERVER_PROTOCOL": "HTTP/" + version,
            "wsgi.version": (1, 0),
            "wsgi.url_scheme": scheme,
            "wsgi.input_terminated": True,
            "wsgi.errors": sys.stderr,
            "wsgi.multithread": False,
            "wsgi.multiprocess": True,
            "wsgi.run_once": False,
        }
        if len(_TEMPLATES) < 64:  # a server has a handful of ends (address, scheme, protocol)
            _TEMPLATES[end] = template
    return template


class NoBody:
    """``wsgi.input`` of a call without a body (no Content-Length, no Transfer-Encoding): one, shared, holding nothing."""

    __slots__ = ()

    def read(self, size: int | None = -1) -> bytes:
        return b""

    def readline(self, size: int | None = -1) -> bytes:
        return b""

    def readlines(self, hint: int = -1) -> list[bytes]:
        return []

    def __iter__(self) -> Any:
        return iter(())


NO_BODY = NoBody()


def make_environ(scope: Scope, receive: Receive) -> dict[str, Any]:
    """The WSGI environ (PEP 3333) of an ASGI ``http`` scope."""
    environ = _template(scope).copy()
    path = scope["path"]
    root = scope.get("root_path", "")  # as sent: SCRIPT_NAME holds it re-encoded for WSGI
    if root and path.startswith(root):
        path = path[len(root) :]
    environ["REQUEST_METHOD"] = scope["method"]
    environ["PATH_INFO"] = path if path.isascii() else path.encode().decode("latin-1")
    query = scope.get("query_string")
    environ["QUERY_STRING"] = query.decode("latin-1") if query else ""
    environ[ASGI_SCOPE_KEY] = scope
    environ[ASGI_RECEIVE_KEY] = receive
    call = environ[SERVER_CALL_KEY] = LoopCall(scope)
    client = scope.get("client")
    if client:
        environ["REMOTE_ADDR"] = str(client[0])
        environ["REMOTE_PORT"] = str(client[1])
    known = HEADER_KEYS.get
    for raw_name, raw_value in scope["headers"]:
        key = known(raw_name) or header_key(raw_name)
        if key in environ:
            environ[key] += ("; " if key == "HTTP_COOKIE" else ",") + raw_value.decode("latin-1")
        else:
            environ[key] = raw_value.decode("latin-1")
    # HTTP/1.1 (RFC 9112, 6.3): without Content-Length or Transfer-Encoding a request has no body;
    # an HTTP/2 request's body is its DATA frames, with a content-length or without (RFC 9113, 8.1).
    if "HTTP_TRANSFER_ENCODING" in environ or environ.get("CONTENT_LENGTH", "0") != "0" or environ["SERVER_PROTOCOL"] == "HTTP/2":
        environ["wsgi.input"] = AsgiInput(receive, call)
    else:
        environ["wsgi.input"] = NO_BODY
    return environ


#: Response header names and status lines repeat from call to call: each is encoded or parsed once.
_NAMES: dict[str, bytes] = {}
_CODES: dict[str, int] = {}
_MAX_CACHED = 256


def _name(name: str) -> bytes:
    encoded = _NAMES.get(name)
    if encoded is None:
        encoded = name.encode("latin-1")
        if len(_NAMES) < _MAX_CACHED:
            _NAMES[name] = encoded
    return encoded


def _code(status: str) -> int:
    code = _CODES.get(status)
    if code is None:
        code = int(status[:3])
        if len(_CODES) < _MAX_CACHED:
            _CODES[status] = code
    return code


def _head(status: str, headers: Iterable[tuple[str, str]]) -> Message:
    names = _NAMES.get
    encoded = []
    for name, value in headers:  # a loop, not a comprehension: a comprehension is a function call of its own
        encoded.append((names(name) or _name(name), value.encode("latin-1")))
    return {"type": "http.response.start", "status": _CODES.get(status) or _code(status), "headers": encoded}


class _Exchange:
    """One call's response on its way out: ``start_response`` and ``write`` for the stack, HTTP's rules kept.

    The edge is the server here, so it keeps what :mod:`funcwsgi.middleware.http_rules`
    keeps on the threaded servers: no body for ``HEAD``, none and no content headers
    for 1xx, 204 and 304.
    """

    __slots__ = ("send", "head", "status", "headers", "bodiless", "head_sent")

    def __init__(self, send: Send, head: bool) -> None:
        self.send = send
        self.head = head
        self.status = ""
        self.headers: list[tuple[str, str]] = []
        self.bodiless = False
        self.head_sent = False

    def start_response(self, status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Callable[[bytes], None]:
        if exc_info is not None:
            try:
                if self.head_sent:
                    raise exc_info[1].with_traceback(exc_info[2])
            finally:
                exc_info = None
        headers, self.bodiless = answer_fields(status, headers, self.head)
        self.status = status
        self.headers = headers
        return self.write

    def write(self, chunk: bytes) -> None:
        if not self.head_sent:
            self.head_sent = True
            wait_for(self.send(_head(self.status, self.headers)))
        if chunk and not self.bodiless:
            wait_for(self.send({"type": "http.response.body", "body": chunk, "more_body": True}))


class AsgiService:
    """A :class:`~funcwsgi.application.FunctionService` served as an ASGI application."""

    def __init__(self, service: FunctionService) -> None:
        config = service.config
        self.service = service
        self.config = config
        # What the service's own __call__ does is done here (the configuration put in the environ), and the
        # call enters the stack below the http layer, whose rules the edge keeps itself (_Exchange).
        top = service.wsgi
        self.call_stack = top.app if type(top) is HttpRulesMiddleware else top
        self.gate = LoopGate(config, service.loaded)
        # The threads' refusal, word for word: the connection closed after it, the call counted as refused.
        self.busy = BUSY.with_headers(("Connection", "close"))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "http":
            await self.http(scope, receive, send)
        elif kind == "lifespan":
            await self.lifespan(receive, send)
        else:  # websockets: not part of the function contract
            await send({"type": "websocket.close", "code": 1003})

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        gate = self.gate
        gate.watch_loop(asyncio.get_running_loop())
        if not gate.enter(scope["path"]):
            await self.reply(self.busy, scope, send)
            return
        try:
            environ = make_environ(scope, receive)
            host = environ.get("HTTP_HOST")
            if host is not None and refused_host(host):  # as the http layer does for WSGI servers (RFC 9112 section 3.2)
                await self.reply(INVALID_HOST, scope, send)
                return
            try:
                answered = await run_bridged(self.serve, environ, send)
            except asyncio.CancelledError:
                raise
            except BaseException:
                # Only a failure after the response started gets here, logged by the errors layer already;
                # returning without the last body message makes the server close the connection.
                log.debug("Call ended while streaming its response", exc_info=True)
                return
            if answered is not None:
                status, headers, body = answered
                await send(_head(status, headers))
                await send({"type": "http.response.body", "body": b"".join(body)})
            later = environ[SERVER_CALL_KEY].later
            if later:  # off the loop: the work may block
                asyncio.get_running_loop().run_in_executor(None, run_after_response, later)
        finally:
            gate.left()

    def serve(self, environ: dict[str, Any], send: Send) -> tuple[str, list[tuple[str, str]], list[bytes]] | None:
        """Runs in the call's greenlet: the stack's answer, sent by the task when the body is a list, else streamed here."""
        exchange = _Exchange(send, environ["REQUEST_METHOD"] == "HEAD")
        environ[CONFIG_KEY] = self.config
        body = self.call_stack(environ, exchange.start_response)
        if type(body) is list and not exchange.head_sent:
            if exchange.bodiless:
                body = []
            return exchange.status, exchange.headers, body
        try:
            # The errors layer took the first chunk already: a failure before it was its 500, one after it ends here.
            # Not started yet (a body that starts its response as it runs), or started with a body: not HEAD, 204, 304
            # (whose body is not run, as the http layer runs none).
            if not exchange.status or not exchange.bodiless:
                for chunk in body:
                    if exchange.bodiless:
                        break  # a body that started its response as it ran
                    if chunk:
                        exchange.write(chunk)
            if not exchange.head_sent:
                exchange.write(b"")
            wait_for(send({"type": "http.response.body", "body": b""}))
        finally:
            close = getattr(body, "close", None)
            if close is not None:
                close()
        return None

    async def reply(self, reply: Reply, scope: Scope, send: Send) -> None:
        await send(_head(reply.status, reply.headers))
        await send({"type": "http.response.body", "body": b"" if scope["method"] == "HEAD" else reply.body})

    async def lifespan(self, receive: Receive, send: Send) -> None:
        # The function's start() and stop() run at the process's moments (funcwsgi.process),
        # as on the WSGI path; the loop only has to be told the app is ready.
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return

    def __repr__(self) -> str:
        return f"<AsgiService {self.service!r}>"
