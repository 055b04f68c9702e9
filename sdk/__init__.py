"""What a function imports: ``import sdk``.

The names match Kyma's python314 ``sdk``, so its functions run unchanged::

    import sdk

    def main(req, res):
        with sdk.get_tracer().start_as_current_span("work"):
            sdk.get_logger().info("got order", extra={"order": 7})
            sdk.emit_cloud_event("order.created", "/shop", {"id": 7})
        res.set_code(204)

Importable and usable without a server, so a function's unit tests can call
it: the tracer is then a no-op one, the logger a plain :mod:`logging` logger,
:func:`get_request` and :func:`get_cloud_event` return ``None``, the metadata
comes from the environment, publishing raises :class:`PublisherNotConfigured`
unless ``PUBLISHER_PROXY_ADDRESS`` is set, and :func:`secret` reads the folders of
``HANDLER_SECRETS_PATH`` in the environment.
"""

from __future__ import annotations

import http.client
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from funcwsgi.cloudevents import CloudEvent
from funcwsgi.current import active_config, current_environ
from funcwsgi.environ import CLOUD_EVENT_KEY
from funcwsgi.logs import OncePerBurst
from funcwsgi.middleware import cancellation as _cancellation
from funcwsgi.request import FunctionRequest, get_or_create_request

from .secrets import SecretNotFound
from .secrets import read_secret as _read_secret

if TYPE_CHECKING:
    from opentelemetry.trace import Tracer

__all__ = [
    "CloudEvent",
    "PublishError",
    "PublisherNotConfigured",
    "SecretNotFound",
    "cancelled",
    "emit_cloud_event",
    "emit_cloud_event_async",
    "get_annotations",
    "get_body_size_limit",
    "get_cloud_event",
    "get_function_name",
    "get_labels",
    "get_logger",
    "get_namespace",
    "get_request",
    "get_runtime",
    "get_timeout",
    "get_tracer",
    "publishCloudEvent",
    "publish_cloud_event",
    "publish_cloud_event_async",
    "secret",
]

#: The logger :func:`get_logger` returns; its records carry the call's ids like every other.
LOGGER_NAME = "function"
TRACER_NAME = "sdk"

# Trace headers of the call, forwarded as they came when no span of our own is active
# (tracing off), so a published event still continues the caller's trace.
_TRACE_HEADERS = {
    "HTTP_TRACEPARENT": "traceparent",
    "HTTP_TRACESTATE": "tracestate",
    "HTTP_BAGGAGE": "baggage",
    "HTTP_B3": "b3",
    "HTTP_X_B3_TRACEID": "X-B3-TraceId",
    "HTTP_X_B3_SPANID": "X-B3-SpanId",
    "HTTP_X_B3_PARENTSPANID": "X-B3-ParentSpanId",
    "HTTP_X_B3_SAMPLED": "X-B3-Sampled",
    "HTTP_X_B3_FLAGS": "X-B3-Flags",
}


class PublishError(RuntimeError):
    """Publishing a CloudEvent failed. ``status`` and ``body`` hold the proxy's answer, if any."""

    def __init__(self, message: str, status: int | None = None, body: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.body = body


class PublisherNotConfigured(PublishError):
    """``PUBLISHER_PROXY_ADDRESS`` is not set, so there is nowhere to publish to."""


# -- the call --------------------------------------------------------------------


def get_request() -> FunctionRequest | None:
    """The request of the call being served, or ``None`` outside a call."""
    environ = current_environ.get()
    if environ is None:
        return None
    return get_or_create_request(environ)


def cancelled() -> bool:
    """Whether nobody waits for the call any more: its client left before the answer was complete, or it timed out.

    A function doing long work checks it to stop early. ``False`` outside a
    call (a function's unit tests), and on a server that cannot see a client
    leave until the call times out (docs/sdk.md#cancellation).
    """
    found = _cancellation.current(current_environ.get())
    return found is not None and found.cancelled()


def get_cloud_event() -> Any:
    """The CloudEvent the call carries (binary or structured mode), or ``None``.

    Always funcwsgi's :class:`~funcwsgi.cloudevents.CloudEvent`, whichever
    ``cloudevents`` generation is installed: it reads as both do
    (``event["type"]``, ``event.data``, ``get_attributes()``, ``get_type()``,
    ``get_time()``, ``get_extension(name)``...), and its attributes are
    exactly those sent.
    """
    environ = current_environ.get()
    if environ is None:
        return None
    return environ.get(CLOUD_EVENT_KEY)


# -- telemetry -------------------------------------------------------------------


def get_tracer() -> Tracer:
    """An OpenTelemetry tracer; its spans are children of the call's span.

    Without ``TRACE_COLLECTOR_ENDPOINT`` (or outside a server) it is a no-op
    tracer: spans can be started and ended, and cost next to nothing.
    """
    from opentelemetry import trace

    return trace.get_tracer(TRACER_NAME)


def get_logger() -> logging.Logger:
    """A :mod:`logging` logger; in a server its records are JSON lines with the call's ids."""
    return logging.getLogger(LOGGER_NAME)


# -- events ----------------------------------------------------------------------


def emit_cloud_event(type: str, source: str, data: Any, optional_attributes: Mapping[str, Any] | None = None) -> None:  # noqa: A002 - Kyma's parameter names
    """Publish a new CloudEvent of ``type`` from ``source`` carrying ``data``.

    ``optional_attributes`` adds attributes (``subject``, ``datacontenttype``,
    extensions...). ``id``, ``specversion`` and ``time`` are filled in. Raises
    :class:`PublishError` as :func:`publish_cloud_event` does, and
    ``ValueError`` for attributes the CloudEvents specification refuses.
    """
    from funcwsgi.compat.cloudevents_lib import make_event

    attributes: dict[str, Any] = {"type": type, "source": source}
    if optional_attributes:
        if not isinstance(optional_attributes, Mapping):
            raise TypeError(f"optional_attributes must be a mapping of attribute names to values, not {optional_attributes.__class__.__name__}")
        attributes.update(optional_attributes)
    publish_cloud_event(make_event(attributes, data))


async def emit_cloud_event_async(
    type: str,  # noqa: A002 - Kyma's parameter names
    source: str,
    data: Any,
    optional_attributes: Mapping[str, Any] | None = None,
) -> None:
    """:func:`emit_cloud_event` for ``async def`` functions: awaits the publish without blocking the loop.

    The POST runs on a thread of the loop's default executor with a copy of
    the call's context, so its trace context and configuration are the call's.
    """
    import asyncio

    await asyncio.to_thread(emit_cloud_event, type, source, data, optional_attributes)


async def publish_cloud_event_async(event: Any) -> None:
    """:func:`publish_cloud_event` for ``async def`` functions (see :func:`emit_cloud_event_async`)."""
    import asyncio

    await asyncio.to_thread(publish_cloud_event, event)


def publish_cloud_event(event: Any) -> None:
    """POST a CloudEvent to ``PUBLISHER_PROXY_ADDRESS`` in structured mode.

    ``event`` is a :class:`~funcwsgi.cloudevents.CloudEvent`, an event of the
    ``cloudevents`` library (either generation), or a mapping of its
    attributes with an optional ``data`` key. The call's trace
    context travels with it. Raises :class:`PublisherNotConfigured` when the
    address is unset, and :class:`PublishError` when the proxy cannot be
    reached within ``PUBLISHER_PROXY_TIMEOUT`` seconds or answers other than
    2xx (``status`` and ``body`` then hold its answer).
    """
    from funcwsgi.compat.cloudevents_lib import is_cloud_event, make_event, to_structured

    config = active_config()
    address = config.publisher_proxy_address
    call = _cancellation.current(current_environ.get())
    if call is not None and call.cancelled():
        raise PublishError(f"the CloudEvent was not published: the call was cancelled ({_CAUSES[call.cause or '']})")
    if not address:
        raise PublisherNotConfigured(
            "cannot publish the CloudEvent: PUBLISHER_PROXY_ADDRESS is not set (expected the URL of the publisher proxy)"
        )
    if not is_cloud_event(event):
        if not isinstance(event, Mapping):
            raise TypeError(f"publish_cloud_event() needs a CloudEvent or a mapping of its attributes, got a {type(event).__name__}")
        attributes = dict(event)
        event = make_event(attributes, attributes.pop("data", None))
    headers, body = to_structured(event)
    _add_trace_context(headers)
    from .publishing import Cancelled, post

    try:
        status, text = post(address, body if isinstance(body, bytes) else str(body).encode(), headers,
                            config.publisher_proxy_timeout, None if call is None else call.cancelled)
    except Cancelled:
        raise PublishError(f"the CloudEvent was not published: the call was cancelled ({_CAUSES[call.cause or ''] if call else 'cancelled'})") from None
    except (OSError, http.client.HTTPException, ValueError) as error:
        _publish_failures.warning("cannot publish the CloudEvent to %s: %s", address, type(error).__name__)
        raise PublishError(f"cannot publish the CloudEvent to {address}: {type(error).__name__}: {error}") from error
    if not 200 <= status < 300:
        text = text[:1000]
        _publish_failures.warning("cannot publish the CloudEvent to %s: the proxy answered %d", address, status)
        raise PublishError(f"the publisher proxy at {address} answered {status}: {text}", status=status, body=text)


_CAUSES = {"client": "its client left", "timeout": "it timed out", "": "cancelled"}

# The function gets every failure as a PublishError; the log gets one line per burst of them.
_publish_failures = OncePerBurst(logging.getLogger("funcwsgi.publisher"))

publishCloudEvent = publish_cloud_event  # noqa: N816 - the spelling of the API rework document


def _add_trace_context(headers: dict[str, str]) -> None:
    from opentelemetry import propagate, trace

    if trace.get_current_span().get_span_context().is_valid:
        propagate.inject(headers)
        return
    environ = current_environ.get()
    if environ is not None:
        for key, name in _TRACE_HEADERS.items():
            value = environ.get(key)
            if value is not None:
                headers[name] = value


# -- secrets -------------------------------------------------------------------


def secret(name: str) -> str:
    """The text of the secret file ``name`` from the first folder of ``HANDLER_SECRETS_PATH`` holding it.

    One trailing newline is removed; a rotated file is read again. Raises
    :class:`SecretNotFound` naming the secret and every folder searched (never
    a value), and ``ValueError`` for a name with a ``/``.
    """
    return _read_secret(name)


# -- metadata --------------------------------------------------------------------


def get_function_name() -> str:
    """``FUNC_NAME``."""
    return active_config().func_name


def get_namespace() -> str:
    """``FUNC_NAMESPACE``."""
    return active_config().func_namespace


def get_runtime() -> str:
    """``FUNC_RUNTIME`` (``python314`` unless set)."""
    return active_config().func_runtime


def get_timeout() -> float:
    """Seconds a call may take (``SERVER_CALL_TIMEOUT``): an ``int`` when whole, as Kyma's ``int(FUNC_TIMEOUT)``."""
    seconds = active_config().server_call_timeout
    return int(seconds) if seconds == int(seconds) else seconds


def get_body_size_limit() -> float:
    """The largest request body accepted, in megabytes as Kyma counts them (0 = no limit)."""
    megabytes = active_config().server_max_body_size / (1024 * 1024)
    return int(megabytes) if megabytes == int(megabytes) else megabytes


def get_labels() -> dict[str, str]:
    """The function's labels (``FUNC_LABELS``), a copy."""
    return dict(active_config().func_labels)


def get_annotations() -> dict[str, str]:
    """The function's annotations (``FUNC_ANNOTATIONS``), a copy."""
    return dict(active_config().func_annotations)
