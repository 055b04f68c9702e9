"""Knative func-python functions: ``function/func.py`` exporting ``new()`` or an ASGI ``handle``.

``func create -l python`` lays a function out as a ``function/`` package whose
``new()`` returns an instance with ``async def handle(self, scope, receive,
send)`` and optional ``start(cfg)``, ``stop()``, ``alive()`` and ``ready()``;
a module-level ``handle(scope, receive, send)`` is the other accepted form.
Such a project is recognised by its layout together with ``LISTEN_ADDRESS``
(what func-python's own server reads) or a ``func.yaml`` naming the python
runtime. The instance's hooks become the runtime's own: ``start`` gets a copy
of the environment, ``alive`` and ``ready`` answer ``/health/liveness`` and
``/health/readiness`` (``True``/``False`` or ``(ok, message)``).

Until the runtime serves ASGI on an event loop of its own, the call crosses a
small ASGI-to-WSGI bridge: one event loop per worker process in a thread of its
own runs ``handle``; the response's body chunks reach the WSGI server as they
are sent, so streamed bodies stay streamed (docs/migration-knative.md).
"""

from __future__ import annotations

import dataclasses
import logging
import os
import queue
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from ..environ import CLOUD_EVENT_KEY
from ..errors import LoadError
from ..replies import Reply, status_line
from ..signatures import Invoker
from .sources import defines, project_root

if TYPE_CHECKING:
    import asyncio

    from _typeshed.wsgi import StartResponse, WSGIEnvironment

    from ..config import Config
    from ..loader import LoadedFunction

log = logging.getLogger("funcwsgi.knative")

PACKAGE = "function"
_BODY_CHUNK = 64 * 1024


def _module_file(folder: str) -> str | None:
    for name in ("func.py", "__init__.py"):
        path = os.path.join(folder, name)
        if defines(path, "new") or defines(path, "handle"):
            return path
    return None


def _package_folder(root: str) -> str:
    if os.path.basename(os.path.normpath(root)) == PACKAGE and _module_file(root):
        return root  # already located
    return os.path.join(root, PACKAGE)


def _func_yaml(root: str, key: str) -> str | None:
    """A top-level value of the project's ``func.yaml`` (``runtime``, ``invoke``), if there is one."""
    path = os.path.join(root, "func.yaml")
    if not os.path.isfile(path):
        return None
    import yaml  # only when there is a func.yaml: recognising platforms must not import it for every function

    try:
        with open(path, encoding="utf-8") as handle:
            document = yaml.safe_load(handle)
    except (OSError, yaml.YAMLError):
        return None
    value = document.get(key) if isinstance(document, dict) else None
    return str(value) if value else None


def signal(config: Config) -> str | None:
    root = project_root(config)
    folder = _package_folder(root)
    path = _module_file(folder)
    if path is None:
        return None
    if config.knative_listen_address:
        return f"LISTEN_ADDRESS={config.knative_listen_address} and {path} defines new or handle"
    project = os.path.dirname(folder)
    if _func_yaml(project, "runtime") == "python":
        return f"{os.path.join(project, 'func.yaml')} names the python runtime and {path} defines new or handle"
    return None


def locate(config: Config) -> Config:
    folder = _package_folder(project_root(config))
    path = _module_file(folder)
    if path is None:
        raise LoadError(f"no {PACKAGE}/func.py defining new() or handle() in {os.path.dirname(folder)}")
    module = os.path.splitext(os.path.basename(path))[0]
    name = "new" if defines(path, "new") else "handle"
    return config.replace(handler_folder=folder, handler_module_name=module, handler_function_name=name)


def load(config: Config) -> LoadedFunction:
    """Import the module; for ``new()``, make the instance once and take its hooks."""
    from ..loader import load_function

    # handle(scope, receive, send) has three parameters, which no funcwsgi signature has.
    loaded = load_function(config.replace(handler_signature="none"))
    if loaded.name != "new":
        return loaded
    where = f"new() in {loaded.path}"
    try:
        instance = loaded.function()
    except Exception as error:
        raise LoadError(f"{where} raised {type(error).__name__}: {error}") from None
    handle = getattr(instance, "handle", None)
    if not callable(handle):
        raise LoadError(f"{where} returned a {type(instance).__name__} without a handle(scope, receive, send) method")
    hooks: dict[str, Callable[..., Any]] = {}
    start = getattr(instance, "start", None)
    if callable(start):
        hooks["start"] = lambda: start(dict(os.environ))
    stop = getattr(instance, "stop", None)
    if callable(stop):
        hooks["stop"] = stop
    for probe in ("alive", "ready"):
        method = getattr(instance, probe, None)
        if callable(method):
            hooks[probe] = _probe(method)
    return dataclasses.replace(loaded, function=handle, name="handle", hooks=hooks)


def _probe(method: Callable[[], Any]) -> Callable[[], Any]:
    """func-python's ``alive()``/``ready()`` answer ``ok`` or ``(ok, message)``; the runtime's checks take a reason."""

    def check() -> Any:
        result = method()
        if isinstance(result, tuple):
            ok, message = result
            return True if ok else (str(message) or False)
        return result

    return check


# -- the ASGI-to-WSGI bridge --------------------------------------------------------------


class _Loop:
    """One event loop per process, running in a daemon thread; made again after a fork."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pid = 0

    def get(self) -> asyncio.AbstractEventLoop:
        import asyncio  # here: recognising platforms at start-up must not import asyncio for every function

        if self._loop is None or self._pid != os.getpid():
            with self._lock:
                if self._loop is None or self._pid != os.getpid():
                    loop = asyncio.new_event_loop()
                    threading.Thread(target=loop.run_forever, name="funcwsgi-asgi-loop", daemon=True).start()
                    self._loop, self._pid = loop, os.getpid()
        return self._loop


_loop = _Loop()
_DONE = object()


def scope_of(environ: dict[str, Any]) -> dict[str, Any]:
    """The ASGI HTTP scope of a WSGI call."""
    path = environ.get("PATH_INFO", "") or "/"
    headers = [
        (key[5:].replace("_", "-").lower().encode("latin-1"), str(value).encode("latin-1"))
        for key, value in environ.items()
        if key.startswith("HTTP_")
    ]
    for key, name in (("CONTENT_TYPE", b"content-type"), ("CONTENT_LENGTH", b"content-length")):
        if environ.get(key):
            headers.append((name, environ[key].encode("latin-1")))
    server_port = environ.get("SERVER_PORT")
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": environ.get("SERVER_PROTOCOL", "HTTP/1.1").partition("/")[2] or "1.1",
        "method": environ.get("REQUEST_METHOD", "GET"),
        "scheme": environ.get("wsgi.url_scheme", "http"),
        # WSGI hands the path decoded as latin-1; ASGI wants it decoded as UTF-8.
        "path": unquote(path.encode("latin-1").decode("utf-8", "replace")),
        "raw_path": path.encode("latin-1"),
        "query_string": environ.get("QUERY_STRING", "").encode("latin-1"),
        "root_path": environ.get("SCRIPT_NAME", ""),
        "headers": headers,
        "client": (environ.get("REMOTE_ADDR", ""), int(environ.get("REMOTE_PORT") or 0)),
        "server": (environ.get("SERVER_NAME", ""), int(str(server_port)) if str(server_port or "").isdigit() else None),
        "state": {},
    }


class EventSender:
    """func-python's sender for CloudEvent functions: ``await send(event)`` answers with the event.

    ``send(event, status)`` and ``send.structured`` encode it in structured mode,
    ``send.binary`` in binary mode; ``send.http(message)`` passes a raw ASGI message.
    """

    def __init__(self, send: Callable[[dict[str, Any]], Any]) -> None:
        self.http = send

    async def __call__(self, event: Any, status: int = 200) -> None:
        await self.structured(event, status)

    async def structured(self, event: Any, status: int = 200) -> None:
        from .cloudevents_lib import to_structured

        await self._answer(*to_structured(event), status)

    async def binary(self, event: Any, status: int = 200) -> None:
        from .cloudevents_lib import to_binary

        await self._answer(*to_binary(event), status)

    async def _answer(self, headers: dict[str, str], body: bytes, status: int) -> None:
        encoded = [(name.encode("latin-1"), value.encode("latin-1")) for name, value in headers.items()]
        await self.http({"type": "http.response.start", "status": status, "headers": encoded})
        await self.http({"type": "http.response.body", "body": body})


class AsgiCall:
    """One call of an ASGI ``handle``, answering as a WSGI app with the chunks it sends."""

    def __init__(self, handle: Callable[..., Any], body: bytes, event: Any = None) -> None:
        import asyncio

        self.handle = handle
        self.body: bytes | None = body
        self.event = event
        self.messages: queue.Queue[Any] = queue.Queue()
        self.finished = asyncio.Event()

    async def receive(self) -> dict[str, Any]:
        if self.body is not None:
            body, self.body = self.body, None
            return {"type": "http.request", "body": body, "more_body": False}
        await self.finished.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: dict[str, Any]) -> None:
        self.messages.put(message)

    async def run(self, scope: dict[str, Any]) -> None:
        send: Callable[..., Any] = self.send
        if self.event is not None:
            scope["event"] = self.event
            send = EventSender(self.send)
        try:
            await self.handle(scope, self.receive, send)
        finally:
            self.finished.set()

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterator[bytes]:
        import asyncio

        future = asyncio.run_coroutine_threadsafe(self.run(scope_of(dict(environ))), _loop.get())
        future.add_done_callback(lambda _: self.messages.put(_DONE))
        first = self.messages.get()
        if first is _DONE:
            future.result()  # the handler's exception, for the errors layer's plain 500
            raise RuntimeError("the ASGI handler returned without sending a response")
        if first.get("type") != "http.response.start":
            raise RuntimeError(f"the ASGI handler sent {first.get('type')!r} before http.response.start")
        headers = [(bytes(name).decode("latin-1"), bytes(value).decode("latin-1")) for name, value in first.get("headers", ())]
        start_response(status_line(int(first.get("status", 200))), headers)
        return self._chunks(future, environ.get("REQUEST_METHOD") == "HEAD")

    def _chunks(self, future: Any, head: bool) -> Iterator[bytes]:
        while True:
            message = self.messages.get()
            if message is _DONE:
                error = future.exception()
                if error is not None:
                    raise error  # after the head went out: the server drops the connection
                return
            if message.get("type") == "http.response.body":
                chunk = bytes(message.get("body", b""))
                if chunk and not head:
                    yield chunk
                if not message.get("more_body", False):
                    return


def _read_body(environ: dict[str, Any]) -> bytes:
    stream = environ.get("wsgi.input")
    length = str(environ.get("CONTENT_LENGTH") or "")
    if stream is None:
        return b""
    if length.isdigit():
        return bytes(stream.read(int(length)))
    if environ.get("wsgi.input_terminated"):
        return bytes(stream.read())
    return b""


NOT_A_CLOUD_EVENT = Reply(400, "expected a CloudEvent (binary or structured mode)")


def invoker(loaded: LoadedFunction, config: Config) -> Invoker[None]:
    """Each call runs the ASGI ``handle`` on the process's event loop; its response streams back.

    With ``invoke: cloudevent`` in ``func.yaml`` (func-python's CloudEvent
    functions), the call's CloudEvent is in ``scope["event"]`` and ``send``
    takes an event; a call that carries none gets 400, as func-python answers.
    """
    handle = loaded.function
    if _func_yaml(os.path.dirname(loaded.folder), "invoke") != "cloudevent":

        def call(environ: dict[str, Any]) -> tuple[Any, None]:
            return AsgiCall(handle, _read_body(environ)), None

        return call

    from ..cloudevents import MalformedCloudEvent
    from .cloudevents_lib import decode

    def call_with_event(environ: dict[str, Any]) -> tuple[Any, None]:
        body = _read_body(environ)
        event = environ.get(CLOUD_EVENT_KEY)
        if event is None:
            headers = {name.decode("latin-1"): value.decode("latin-1") for name, value in scope_of(environ)["headers"]}
            try:
                event = decode(headers, body)
            except MalformedCloudEvent:
                return NOT_A_CLOUD_EVENT, None
        return AsgiCall(handle, body, event), None

    return call_with_event
