"""Knative func-python functions: ``function/func.py`` exporting ``new()`` or an ASGI ``handle``.

``func create -l python`` lays a function out as a ``function/`` package whose
``new()`` returns an instance with ``async def handle(self, scope, receive,
send)`` and optional ``start(cfg)``, ``stop()``, ``alive()`` and ``ready()``;
a module-level ``handle(scope, receive, send)`` is the other accepted form.
Such a project is recognised by its layout together with ``LISTEN_ADDRESS``
(what func-python's own server reads) or a ``func.yaml`` naming the python
runtime. The instance's hooks become the runtime's own: ``start`` gets a copy
of the environment, ``alive`` and ``ready`` answer ``/health/liveness`` and
``/health/readiness`` as func-python answers them (``200``/``500`` and the
hook's message, docs/migration-knative.md).

``handle`` is an ASGI app, served as any async function is: on the event
loop by default, through the runtime's one ASGI bridge (:mod:`.asgi_app`),
its body chunks streamed as it sends them (docs/migration-knative.md).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..environ import ASGI_RECEIVE_KEY, CLOUD_EVENT_KEY
from ..errors import LoadError
from ..handler.signatures import Invoker, is_async
from ..replies import Reply
from ..request import read_body
from .signals import FUNCTION_PACKAGE as PACKAGE
from .signals import func_yaml as _func_yaml
from .signals import knative_module_file as _module_file
from .signals import knative_package_folder as _package_folder
from .sources import defines, project_root

if TYPE_CHECKING:
    from ..config import Config
    from ..handler.loader import LoadedFunction

log = logging.getLogger("funcwsgi.knative")

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
    from ..handler.loader import load_function

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
            hooks[probe] = _probe(method, probe)
    return loaded.replace(function=handle, name="handle", hooks=hooks)


#: func-python's answer to a probe whose hook raised, without the exception's text it sends (``Error: ...``).
PROBE_FAILED = "Internal Server Error"


def _probe(method: Callable[[], Any], name: str) -> Callable[[], Any]:
    """The probe's answer as func-python's ``handle_liveness``/``handle_readiness`` make it.

    ``ok`` or ``(ok, message)``: ``200`` when ``ok`` is truthy, else ``500``;
    the body is ``message`` as text, ``OK`` when the hook gives none (also when
    it says no). A hook that raises answers ``500`` (the traceback logged).
    """
    from ..replies import probe_reply

    def answer(result: Any) -> Any:
        ok, message = result if isinstance(result, tuple) else (result, "OK")
        return probe_reply(200 if ok else 500, f"{message}")

    def failed() -> Any:
        log.error("%s() of the function instance raised", name, exc_info=True)
        return probe_reply(500, PROBE_FAILED)

    if is_async(method):

        async def check_async() -> Any:
            try:
                return answer(await method())
            except Exception:
                return failed()

        return check_async

    def check() -> Any:
        try:
            return answer(method())
        except Exception:
            return failed()

    return check


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


NOT_A_CLOUD_EVENT = Reply(400, "expected a CloudEvent (binary or structured mode)")


def invoker(loaded: LoadedFunction, config: Config, function: Callable[..., Any]) -> Invoker[None]:
    """Each call runs the ASGI ``handle`` through the runtime's one ASGI bridge (:mod:`.asgi_app`), streamed.

    With ``invoke: cloudevent`` in ``func.yaml`` (func-python's CloudEvent
    functions), the call's CloudEvent is in ``scope["event"]`` and ``send``
    takes an event; a call that carries none gets 400, as func-python answers.
    """
    from . import asgi_app  # here: recognising platforms at start-up must not import asyncio for every function

    if _func_yaml(os.path.dirname(loaded.folder), "invoke") != "cloudevent":
        return asgi_app.invoker(loaded)

    from ..cloudevents import MalformedCloudEvent
    from .cloudevents_lib import decode

    handle, name = loaded.function, loaded.name

    def call_with_event(environ: dict[str, Any]) -> tuple[Any, None]:
        body = read_body(environ)
        scope = asgi_app.scope_of(environ)
        event = environ.get(CLOUD_EVENT_KEY)
        if event is None:
            headers = {key.decode("latin-1"): value.decode("latin-1") for key, value in scope["headers"]}
            try:
                event = decode(headers, body)
            except MalformedCloudEvent:
                return NOT_A_CLOUD_EVENT, None
        scope["event"] = event
        return asgi_app.AppCall(handle, name, scope, body, sender=EventSender, server_receive=environ.get(ASGI_RECEIVE_KEY)), None

    return call_with_event
