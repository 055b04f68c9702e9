"""The ``main(event, context)`` contract of Kyma <=3.12 and Kubeless runtimes.

``event`` is a dict with the keys both platforms filled in, plus the methods
Kyma's event object had. Its publishing methods call :mod:`sdk`; nothing is
re-implemented here.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from werkzeug.exceptions import BadRequest

from ..cloudevents import STRUCTURED
from ..config import Config
from ..request import FunctionRequest, get_or_create_request, has_body, loads_json
from .bottle import BottleRequest
from .cloudevents_lib import attribute_strings, data_of

if TYPE_CHECKING:
    from ..handler.loader import LoadedFunction
    from ..handler.signatures import Invoker

JSON_TYPES = ("application/json", "application/cloudevents+json")

#: Headers Kubeless copied into the event, ``None`` when absent.
KUBELESS_KEYS = ("event-id", "event-type", "event-time", "event-namespace")
#: CloudEvent headers Kyma <=3.12 always put in the event, ``None`` when absent.
KYMA_CE_KEYS = ("ce-type", "ce-source", "ce-eventtypeversion", "ce-specversion", "ce-id", "ce-time")

log = logging.getLogger("funcwsgi.legacy")

_warned: set[str] = set()
_warned_lock = threading.Lock()


def _deprecated(name: str, instead: str) -> None:
    """Log a deprecation once per process, so a busy function does not flood the log."""
    with _warned_lock:
        if name in _warned:
            return
        _warned.add(name)
    log.warning("event.%s is deprecated and will be removed; use %s", name, instead)


class Event(dict[str, Any]):
    """The ``event`` mapping (``event['data']``, ``event['ce-type']``...) with Kyma's methods.

    Kyma's event kept its keys in ``event.ceHeaders`` and served item access
    from it; here the two are one mapping, so a function that pops a key from
    ``ceHeaders`` no longer finds it in ``event`` either. Kyma's six ``ce-*``
    keys are in the mapping only when the request carried them (Kyma's own
    test functions check ``'ce-type' in event.ceHeaders``), but reading one
    that is absent gives ``None`` rather than ``KeyError``, as older Kyma
    runtimes gave.
    """

    __slots__ = ()

    def __missing__(self, key: str) -> Any:
        if key in _NONE_WHEN_ABSENT:
            return None
        raise KeyError(key)

    @property
    def ceHeaders(self) -> Event:  # noqa: N802 - Kyma's spelling
        """The event's keys, as Kyma's ``event.ceHeaders``: the event itself."""
        return self

    @property
    def extensions(self) -> dict[str, Any]:
        """``event['extensions']``: ``{'request': <the request, with bottle's names>}``."""
        return self["extensions"]  # type: ignore[no-any-return]

    @property
    def req(self) -> BottleRequest:
        """The request, as Kyma's ``event.req`` (also ``event['extensions']['request']``)."""
        return self["extensions"]["request"]  # type: ignore[no-any-return]

    @property
    def tracer(self) -> Any:
        """The OpenTelemetry tracer, as Kyma's ``event.tracer``; same as ``sdk.get_tracer()``."""
        import sdk

        return sdk.get_tracer()

    def emitCloudEvent(  # noqa: N802 - Kyma's spelling
        self, type: str, source: str, data: Any, optional_cloud_event_attributes: dict[str, Any] | None = None
    ) -> Any:
        """Publish a CloudEvent; same as ``sdk.emit_cloud_event``."""
        import sdk

        return sdk.emit_cloud_event(type, source, data, optional_cloud_event_attributes)

    def publishCloudEvent(self, data: dict[str, Any]) -> Any:  # noqa: N802
        """Publish a CloudEvent given as a dict (as :meth:`buildResponseCloudEvent` makes). Deprecated."""
        _deprecated("publishCloudEvent", "sdk.emit_cloud_event(type, source, data, optional_attributes)")
        import sdk

        if not isinstance(data, dict) or not data.get("type") or not data.get("source"):
            raise ValueError("publishCloudEvent needs a dict with at least 'type' and 'source', as buildResponseCloudEvent makes")
        # Kyma's dicts carry None for attributes the incoming event lacked; CloudEvents has no null attributes.
        return sdk.publish_cloud_event({k: v for k, v in data.items() if v is not None})

    def buildResponseCloudEvent(self, event_id: str, event_type: str, event_data: Any) -> dict[str, Any]:  # noqa: N802
        """A CloudEvent dict answering this event (its source and versions). Deprecated."""
        _deprecated("buildResponseCloudEvent", "sdk.emit_cloud_event(type, source, data, optional_attributes)")
        return {
            "type": event_type,
            "source": self.get("ce-source"),
            "eventtypeversion": self.get("ce-eventtypeversion"),
            "specversion": self.get("ce-specversion") or "1.0",
            "id": event_id,
            "data": event_data,
            "datacontenttype": _content_type_of(event_data),
        }


def _content_type_of(data: Any) -> str:
    if isinstance(data, (dict, list)):
        return "application/json"
    if isinstance(data, (bytes, bytearray)):
        return "application/octet-stream"
    return "text/plain"


def build_context(config: Config, function_name: str) -> dict[str, Any]:
    """The ``context`` mapping; the same values for every call, so built once."""
    return {
        "function-name": config.func_name or function_name,
        "namespace": config.func_namespace,
        "timeout": config.server_call_timeout,
        "runtime": config.func_runtime,
        "memory-limit": config.func_memory_limit or _memory_limit(),
        # Kyma <=3.12: the largest body accepted, in bytes (its FUNC_MEMFILE_MAX); 0 is no limit.
        "body-size-limit": config.server_max_body_size,
    }


#: environ key -> event key, for the keys copied from headers.
_FIXED_KEYS = {"HTTP_" + key.upper().replace("-", "_"): key for key in KUBELESS_KEYS + KYMA_CE_KEYS}
#: Kubeless put its keys in every event, None when the header was absent.
_ABSENT = dict.fromkeys(KUBELESS_KEYS)
_NONE_WHEN_ABSENT = frozenset(KYMA_CE_KEYS)


def build_event(request: FunctionRequest) -> Event:
    """The event for one call. The environ is scanned once, so a call pays a few microseconds."""
    environ = request.environ
    data: Any = b""
    if has_body(environ):
        data = request.get_data()
    if environ.get("CONTENT_TYPE") and request.mimetype in JSON_TYPES:
        # As bottle's request.json, which both runtimes used: no body is None,
        # a body that is not JSON answers 400 without calling the function.
        if not data:
            data = None
        else:
            try:
                data = loads_json(data)
            except ValueError:
                raise BadRequest("The request body is not valid JSON.") from None
    event = Event(_ABSENT)
    event["data"] = data
    event["extensions"] = {"request": BottleRequest(request)}
    for name, value in environ.items():
        if name.startswith("HTTP_"):
            key = _FIXED_KEYS.get(name)
            if key is not None:
                event[key] = value
            elif name.startswith("HTTP_CE_"):
                event["ce-" + name[8:].lower().replace("_", "-")] = value
    cloud_event = request.cloud_event
    if cloud_event is not None and request.mimetype == STRUCTURED:
        _add_structured_event(event, cloud_event)
    return event


def _add_structured_event(event: Event, cloud_event: Any) -> None:
    """A structured event's attributes as the ``ce-*`` keys a binary one has, and its data.

    A binary event's keys come from its headers, exactly as sent: the decoded
    event may hold attributes the library filled in (``time``), which the
    sender never set.
    """
    for name, value in attribute_strings(cloud_event).items():
        event["ce-" + name] = value
    event["data"] = data_of(cloud_event)


#: cgroup v1's "no limit" (2**63 - 1 rounded down to a page); no real limit comes near it.
UNLIMITED_V1 = 2**62


CGROUP_MEMORY_FILES = ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes")


def _memory_limit(files: tuple[str, ...] = CGROUP_MEMORY_FILES) -> str:
    """The container's memory limit as the cgroup (v2, else v1) reports it; '' when unlimited."""
    for path in files:
        try:
            with open(path) as handle:
                value = handle.read().strip()
        except OSError:
            continue
        # cgroup v2 writes "max"; v1 writes the largest page-aligned number it holds.
        return "" if value == "max" or int(value) >= UNLIMITED_V1 else value
    return ""


def event_context_invoker(loaded: LoadedFunction, config: Config, function: Callable[..., Any]) -> Invoker[None]:
    """Call ``function(event, context)``: the context is built once, each call gets its own copy."""
    context = build_context(config, loaded.name)

    def call_event_context(environ: dict[str, Any]) -> tuple[Any, None]:
        return function(build_event(get_or_create_request(environ)), dict(context)), None

    return call_event_context
