"""Every key funcwsgi puts in a call's WSGI environ, in one place.

Namespaced as werkzeug's are (``werkzeug.proxy_fix.orig``), so they never
clash with a server's or a framework's own keys.
"""

from __future__ import annotations

#: The :class:`~funcwsgi.config.Config` of the service serving the call (the sdk reads it).
CONFIG_KEY = "funcwsgi.config"
#: The call's request id (the caller's ``X-Request-Id`` or a new one).
REQUEST_ID_KEY = "funcwsgi.request_id"
#: The server span of the call, when tracing is on.
SPAN_KEY = "funcwsgi.span"
#: The exception the function raised, for the layers that count and log failures.
ERROR_KEY = "funcwsgi.error"
#: A failure another layer turned into a response (the call timeout's 408).
FAILURE_KEY = "funcwsgi.failure"
#: The CloudEvent the request carries, decoded once: ``req.cloud_event`` and ``sdk.get_cloud_event()`` read it.
CLOUD_EVENT_KEY = "funcwsgi.cloud_event"
#: Attributes a trigger other than HTTP gives the call's server span (OpenTelemetry's messaging conventions).
SPAN_ATTRIBUTES_KEY = "funcwsgi.span_attributes"
#: Attributes a trigger other than HTTP gives the call's FaaS metrics (``{"faas.trigger": "pubsub"}``).
METRIC_ATTRIBUTES_KEY = "funcwsgi.metric_attributes"
#: The Kafka record a triggered call serves.
KAFKA_RECORD_KEY = "funcwsgi.kafka.record"
#: Set when the call is served on the event loop (:mod:`funcwsgi.eventloop.asgi`): the call's ASGI scope.
ASGI_SCOPE_KEY = "funcwsgi.asgi.scope"
#: Set with it: the call's ASGI ``receive``, for an ASGI function to hear ``http.disconnect`` after the body.
ASGI_RECEIVE_KEY = "funcwsgi.asgi.receive"
#: On the loop path, the call's :class:`~funcwsgi.timeouts.Deadline` (the timeout layer puts it there for the loop's code).
DEADLINE_KEY = "funcwsgi.deadline"
#: The call's :class:`~funcwsgi.middleware.cancellation.Cancellation`: whether anyone still waits for it (``sdk.cancelled()``).
CANCELLATION_KEY = "funcwsgi.cancellation"


#: The environ key of each request header name seen so far (names as servers hand them, lower-cased):
#: a call's headers are looked up, not decoded, upper-cased and rewritten each time.
#: The two headers PEP 3333 names without the ``HTTP_`` prefix.
_CONTENT_KEYS = {"content-length": "CONTENT_LENGTH", "content-type": "CONTENT_TYPE"}
HEADER_KEYS: dict[bytes, str] = {name.encode(): key for name, key in _CONTENT_KEYS.items()}
#: Past this many names (a client inventing header names), new ones are computed, not kept.
_MAX_HEADER_KEYS = 1024


def header_key(raw_name: bytes) -> str:
    """The environ key of a request header (PEP 3333): ``HTTP_X_REQUEST_ID`` for ``x-request-id``."""
    key = HEADER_KEYS.get(raw_name)
    if key is None:
        name = raw_name.decode("latin-1").lower()
        key = _CONTENT_KEYS.get(name) or "HTTP_" + name.upper().replace("-", "_")
        if len(HEADER_KEYS) < _MAX_HEADER_KEYS:
            HEADER_KEYS[raw_name] = key
    return key
