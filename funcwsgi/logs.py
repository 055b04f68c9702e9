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

import base64
import enum
import logging
import sys
import threading
import time
import traceback
from collections.abc import Callable
from types import TracebackType
from typing import Any

import orjson

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


#: A LogRecord's own attributes: every other attribute is an ``extra={...}`` field, written as given.
RECORD_ATTRIBUTES = frozenset(
    {
        "args", "asctime", "created", "exc_info", "exc_text", "filename", "funcName", "levelname", "levelno",
        "lineno", "module", "msecs", "message", "msg", "name", "pathname", "process", "processName",
        "relativeCreated", "stack_info", "thread", "threadName", "taskName", "color_message",
    }
)  # fmt: skip


def as_text(value: Any) -> Any:
    """What a value orjson cannot encode is written as: text, or a list for an enum class."""
    if isinstance(value, BaseException):
        return f"{value.__class__.__name__}: {value}"
    if isinstance(value, TracebackType):
        return "".join(traceback.format_tb(value)).strip()
    if isinstance(value, (bytes, bytearray)):
        return base64.urlsafe_b64encode(value).decode("utf8")
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, enum.EnumMeta):
        return [member.value for member in value]  # type: ignore[var-annotated]  # an EnumMeta iterates its members
    if isinstance(value, type):
        return value.__name__
    try:
        return str(value)
    except Exception:  # a broken __str__ must not lose the record
        try:
            return repr(value)
        except Exception:
            return "__could_not_encode__"


class RecordFormatter(logging.Formatter):
    """One JSON object per record, encoded by orjson, with the fields the module docstring lists.

    Written for this one format rather than configured from python-json-logger,
    whose general field handling (renames, defaults, prefixes) a record never
    used here and whose import cost some 7 million instructions at every cold
    start (issue 44); the lines are the ones it wrote. An access-log record
    is written for every call, so its cost counts too (measured with
    callgrind on an access-log record: orjson ~8k instructions, a reused
    ``json.JSONEncoder`` ~38k).
    """

    def __init__(self, static_fields: dict[str, Any]) -> None:
        super().__init__()
        self.static_fields = dict(static_fields)
        self._millisecond = -1
        self._text = ""

    def format(self, record: logging.LogRecord) -> str:
        message_dict: dict[str, Any] = {}
        if isinstance(record.msg, dict):  # a dict as the message gives fields, not text
            message_dict = record.msg.copy()
            record.message = ""
        else:
            record.message = record.getMessage()
        if record.exc_info and not message_dict.get("exc_info"):
            message_dict["exc_info"] = self.formatException(record.exc_info)
        if not message_dict.get("exc_info") and record.exc_text:
            message_dict["exc_info"] = record.exc_text
        if record.stack_info and not message_dict.get("stack_info"):
            message_dict["stack_info"] = self.formatStack(record.stack_info)
        log_data = {
            "timestamp": self._timestamp(record.created),
            "level": record.levelname,
            "logger": record.name,
            "message": record.message,
            **self.static_fields,
        }
        for key, value in record.__dict__.items():  # the extras, in the order they were given
            if key not in RECORD_ATTRIBUTES:
                log_data[key] = value
        if message_dict:
            log_data.update(message_dict)
        return self.jsonify_log_record(log_data)

    @staticmethod
    def jsonify_log_record(log_data: dict[str, Any]) -> str:
        return orjson.dumps(log_data, default=as_text, option=orjson.OPT_NON_STR_KEYS).decode("utf8")

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

    def due(self) -> int | None:
        """How many reports were left out since the last one, if one is due now; None (and one more left out) if not."""
        now = time.monotonic()
        with self._lock:
            if now < self._quiet_until:
                self._unreported += 1
                return None
            unreported, self._unreported = self._unreported, 0
            self._quiet_until = now + self.seconds
        return unreported

    def warning(self, message: str, *args: Any) -> bool:
        """Log ``message % args`` unless a report was made less than ``seconds`` ago; True if logged."""
        unreported = self.due()
        if unreported is None:
            return False
        if unreported:
            message += " (%d more since the last report)"
            args = (*args, unreported)
        self.logger.warning(message, *args)
        return True
