"""Log set-up, done once per process: one JSON object per line on stdout.

Every record, the runtime's and the function's own ``logging`` calls alike,
carries ``timestamp``, ``level``, ``logger``, ``message``, ``function`` and
``namespace``; inside a call also ``request_id`` and, with tracing on,
``trace_id`` and ``span_id``. ``extra={...}`` fields are added as they are; a
traceback is one ``exc_info`` field of the one record. ``SERVER_LOG_FORMAT=text``
gives plain lines for local development. The four start-up lines are printed
as they are, not through logging (see :mod:`funcwsgi.process`).
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from pythonjsonlogger.core import RESERVED_ATTRS
from pythonjsonlogger.orjson import OrjsonFormatter

from .config import Config
from .current import current_environ
from .environ import REQUEST_ID_KEY

TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
JSON_FIELDS = ("levelname", "name", "message")

#: environ keys the request-id and tracing layers fill in for the log records of a call.

_configured = False
#: The handler :func:`configure_logging` installed on the root logger, if it did.
_installed: logging.StreamHandler[Any] | None = None

#: ``(trace_id, span_id)`` of the active span as hex strings, or ``None``; set
#: when tracing is on, so a process without tracing never imports OpenTelemetry here.
span_ids: Callable[[dict[str, Any]], tuple[str, str] | None] | None = None


def call_fields(environ: dict[str, Any]) -> dict[str, Any]:
    """``request_id`` (and ``trace_id``, ``span_id`` with tracing on) of the call ``environ`` belongs to.

    For records written about a call outside its context: by the errors
    layer once the exception has left the inner layers, by the watchdog's
    thread, by the access log once a streamed body is closed. Passed as
    ``extra``, they win over what :class:`CallFields` would add.
    """
    fields: dict[str, Any] = {}
    request_id = environ.get(REQUEST_ID_KEY)
    if request_id is not None:
        fields["request_id"] = request_id
    if span_ids is not None:
        ids = span_ids(environ)
        if ids is not None:
            fields["trace_id"], fields["span_id"] = ids
    return fields


class CallFields(logging.Filter):
    """Adds the call's request id and trace ids to every record made inside a call."""

    def filter(self, record: logging.LogRecord) -> bool:
        environ = current_environ.get()
        if environ is not None:
            request_id = environ.get(REQUEST_ID_KEY)
            if request_id is not None and not hasattr(record, "request_id"):
                record.request_id = request_id
            if span_ids is not None and not hasattr(record, "trace_id"):
                ids = span_ids(environ)
                if ids is not None:
                    record.trace_id, record.span_id = ids
        return True


class RecordFormatter(OrjsonFormatter):
    """python-json-logger's orjson formatter with a lean field collection for the hot path.

    An access-log record is written for every call, so its cost counts: the
    library's general field handling (renames, defaults, a datetime for the
    encoder to convert) and the standard library's ``json`` each cost about as
    much as the rest of a call. This builds the same object directly and
    encodes it with orjson; values JSON cannot hold still go through the
    library's conversion. (Measured with callgrind on an access-log record:
    orjson ~8k instructions, a reused ``json.JSONEncoder`` ~38k.)
    """

    def __init__(self, static_fields: dict[str, Any]) -> None:
        super().__init__(
            list(JSON_FIELDS),
            static_fields=static_fields,
            reserved_attrs=[*RESERVED_ATTRS, "taskName", "color_message"],
        )
        self._skip = frozenset(self._skip_fields)
        self._millisecond = -1
        self._text = ""

    def add_fields(self, log_data: dict[str, Any], record: logging.LogRecord, message_dict: dict[str, Any]) -> None:
        log_data["timestamp"] = self._timestamp(record.created)
        log_data["level"] = record.levelname
        log_data["logger"] = record.name
        log_data["message"] = record.message
        log_data.update(self.static_fields)
        skip = self._skip
        for key, value in record.__dict__.items():  # the extras, in the order they were given
            if key not in skip:
                log_data[key] = value
        if message_dict:
            log_data.update(message_dict)

    def _timestamp(self, created: float) -> str:
        """RFC 3339 in UTC with milliseconds, formatted once per millisecond (calls come faster)."""
        millisecond = int(created * 1000)
        if millisecond != self._millisecond:
            second, fraction = divmod(millisecond, 1000)
            self._text = f"{time.strftime('%Y-%m-%dT%H:%M:%S', time.gmtime(second))}.{fraction:03d}Z"
            self._millisecond = millisecond
        return self._text


class DirectJsonWriter:
    """Writes a runtime record straight to the JSON handler's stream, without a LogRecord.

    For the access log, written on every call: a LogRecord and the handler
    chain cost several times what the line itself does. The line is the one
    the handler would write (same fields, same order, same encoder), under
    the handler's lock. Used only while that handler is the sole place the
    record could go (see :func:`direct_writer`).
    """

    def __init__(self, handler: logging.StreamHandler[Any], formatter: RecordFormatter) -> None:
        self.handler = handler
        self.formatter = formatter
        self.static_fields = formatter.static_fields

    def write(self, logger_name: str, message: str, fields: dict[str, Any]) -> None:
        data = {
            "timestamp": self.formatter._timestamp(time.time()),
            "level": "INFO",
            "logger": logger_name,
            "message": message,
            **self.static_fields,
            **fields,
        }
        line = self.formatter.jsonify_log_record(data) + self.handler.terminator
        handler = self.handler
        handler.acquire()
        try:
            stream = handler.stream
            stream.write(line)
            stream.flush()
        finally:
            handler.release()


def direct_writer(logger: logging.Logger) -> DirectJsonWriter | None:
    """A :class:`DirectJsonWriter` when ``logger``'s records can only reach our JSON handler.

    That is: logging was set up by :func:`configure_logging` in JSON format,
    and neither ``logger``, its ancestors nor the root have other handlers or
    filters. Otherwise ``None``, and records go through :mod:`logging` as usual.
    """
    handler = _installed
    if handler is None or not isinstance(handler.formatter, RecordFormatter):
        return None
    current: logging.Logger | None = logger
    while current is not None:
        if current.filters:
            return None
        expected = [handler] if current is logging.getLogger() else []
        if current.handlers != expected:
            return None
        if current is not logging.getLogger() and not current.propagate:
            return None
        current = current.parent
    return DirectJsonWriter(handler, handler.formatter)


def json_formatter(config: Config) -> logging.Formatter:
    return RecordFormatter({"function": config.func_name, "namespace": config.func_namespace})


def build_handler(config: Config, stream: Any = None) -> logging.StreamHandler[Any]:
    handler = logging.StreamHandler(stream or sys.stdout)
    if config.server_log_format == "json":
        handler.setFormatter(json_formatter(config))
    else:
        handler.setFormatter(logging.Formatter(TEXT_FORMAT))
    handler.addFilter(CallFields())
    return handler


def configure_logging(config: Config) -> None:
    """Send the runtime's and the function's log records to stdout, once per process.

    A root logger that already has handlers (set up by the embedding
    application, or by a test runner) is left alone apart from its level.
    """
    global _configured, _installed
    if _configured:
        return
    _configured = True
    root = logging.getLogger()
    if not root.handlers:
        handler = build_handler(config)
        root.addHandler(handler)
        _installed = handler
    root.setLevel(config.server_log_level.upper())


class OncePerBurst:
    """Logs a problem that repeats once when it starts, then at most once per ``seconds``.

    For failures of a dependency (the publisher proxy down): a burst of calls
    that all hit it gives one warning, not one per call; the next report says
    how many were not logged in between.
    """

    def __init__(self, logger: logging.Logger, seconds: float = 10.0) -> None:
        self.logger = logger
        self.seconds = seconds
        self._lock = threading.Lock()
        self._quiet_until = float("-inf")
        self._unreported = 0

    def warning(self, message: str, *args: Any) -> bool:
        """Log ``message % args`` unless a report was made less than ``seconds`` ago; True if logged."""
        now = time.monotonic()
        with self._lock:
            if now < self._quiet_until:
                self._unreported += 1
                return False
            unreported, self._unreported = self._unreported, 0
            self._quiet_until = now + self.seconds
        if unreported:
            message += " (%d more since the last report)"
            args = (*args, unreported)
        self.logger.warning(message, *args)
        return True
