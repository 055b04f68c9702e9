"""The :class:`Config` object: every setting's declaration, the rules between them, and reading them once.

The package's docstring (:mod:`funcwsgi.config`) says how settings are read.
"""

from __future__ import annotations

import dataclasses
import json
import os
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..adapters.specs import ADAPTERS
from ..errors import ConfigError
from .declarations import AWS_LAMBDA, FISSION, FUNCTIONS_FRAMEWORK, KNATIVE, KUBELESS, KYMA, OPENFAAS, Alias, Spec, lookup, setting
from .parsers import (
    choice,
    megabytes,
    non_negative_float,
    non_negative_int,
    optional_bool,
    optional_choice,
    optional_non_negative_int,
    parse_bool,
    parse_brokers,
    parse_folders,
    parse_header_names,
    parse_host,
    parse_list,
    parse_mapping,
    parse_methods,
    parse_optional_str,
    parse_origins,
    parse_path,
    parse_port,
    parse_port_or_zero,
    parse_quantity,
    parse_str,
    positive_float,
    positive_int,
)

SIGNATURES = ("req-res", "req", "none", "event-context", "asgi")
#: The contracts HANDLER_PLATFORM can force (docs/platforms.md); unset, funcwsgi/compat chooses.
PLATFORMS = ("funcwsgi", "kyma", "kubeless", "aws-lambda", "azure", "openfaas", "fission", "knative")
LAMBDA_PAYLOAD_FORMATS = ("1.0", "2.0")
FISSION_PORT = 8888
#: The calls a worker holds at once when SERVER_MAX_INFLIGHT is unset: a memory guard far above ordinary
#: bursts (waiting time, SERVER_QUEUE_TARGET, decides admission; docs/servers.md#admission).
MAX_INFLIGHT = 1000
#: SERVER_QUEUE_TARGET's default (docs/servers.md#admission); a shorter SERVER_CALL_TIMEOUT lowers it.
QUEUE_TARGET = 1.0
#: Functions Framework signature types served (background ``event`` functions are not).
FRAMEWORK_SIGNATURES = ("http", "cloudevent", "typed")
DEFAULT_PROPAGATORS = ("tracecontext", "baggage", "b3multi")
# What each server can do is its adapter's data (funcwsgi/adapters/specs.py); these read it.
#: The servers ``SERVER_ADAPTER`` can name.
SERVER_ADAPTERS = tuple(ADAPTERS)
#: The adapters that serve HTTP/2 when SERVER_HTTP2 is true (docs/servers.md#http2).
HTTP2_ADAPTERS = tuple(name for name, spec in ADAPTERS.items() if spec.http2)
#: Those serving it unless SERVER_HTTP2=false: the ones that bound it as they bound HTTP/1.1.
HTTP2_BY_DEFAULT = tuple(name for name, spec in ADAPTERS.items() if spec.http2_by_default)
#: The adapters that recycle a worker after SERVER_MAX_REQUESTS calls.
RECYCLING_ADAPTERS = tuple(name for name, spec in ADAPTERS.items() if spec.recycles_workers)
LOG_LEVELS = ("debug", "info", "warning", "error", "critical")

KAFKA_PROTOCOLS = ("plaintext", "ssl", "sasl_plaintext", "sasl_ssl")
#: What the Kafka client uses when KAFKA_SECURITY_PROTOCOL is unset (librdkafka's default).
KAFKA_DEFAULT_PROTOCOL = "plaintext"

#: Where the sources are looked for when no HANDLER_FOLDER (nor an alias) is set:
#: the reference document's '/' first, then the volume Kubeless and Kyma <=3.12
#: mount the function's ConfigMap at, then the runtime image's /function.
DEFAULT_FOLDERS: tuple[str, ...] = ("/", "/kubeless", "/function")
#: Where platforms mount secrets, in the order sdk.secret() looks: OpenFaaS's documented
#: folder, Docker's and Compose's, Knative func's (its docs' func.yaml volume), and the
#: mount path of Kyma's Function reference sample (Kyma leaves it to the Function).
DEFAULT_SECRET_FOLDERS: tuple[str, ...] = ("/var/openfaas/secrets", "/run/secrets", "/workspace/secret", "/secret/mount/path")
#: Module files looked for when no HANDLER_MODULE_NAME (nor an alias) is set:
#: the reference document's handler.py, then the Functions Framework's main.py.
DEFAULT_MODULES: tuple[str, ...] = ("handler", "main")


@dataclass(frozen=True)
class Config:
    """The runtime's configuration. Build it with :meth:`from_env`."""

    # -- function metadata ----------------------------------------------------
    func_name: str = setting("FUNC_NAME", "", parse_str, "a string", "Name of the function, used in logs, traces and metrics.")
    func_namespace: str = setting(
        "FUNC_NAMESPACE", "", parse_str, "a string", "Namespace the function runs in.",
        aliases=(Alias("SERVICE_NAMESPACE", KYMA),),
    )
    func_labels: dict[str, str] = setting(
        "FUNC_LABELS", {}, parse_mapping, "a JSON object or k=v,k2=v2",
        "Labels of the function, exposed to it as a dict.", default_doc="''",
    )
    func_annotations: dict[str, str] = setting(
        "FUNC_ANNOTATIONS", {}, parse_mapping, "a JSON object or k=v,k2=v2",
        "Annotations of the function, exposed to it as a dict.", default_doc="''",
    )
    func_memory_limit: str = setting(
        "FUNC_MEMORY_LIMIT", "", parse_quantity, "a memory quantity such as 128Mi",
        "Memory limit reported to main(event, context); read from the cgroup when unset.",
    )
    func_version: str = setting("FUNC_VERSION", "", parse_str, "a string", "Version of the function, reported as faas.version on spans and metrics.")
    func_runtime: str = setting("FUNC_RUNTIME", "python314", parse_str, "a string", "Runtime name reported in start-up lines and to the function.")

    # -- server -----------------------------------------------------------------
    server_host: str = setting(
        "SERVER_HOST", "0.0.0.0", parse_host, "an IP address such as 0.0.0.0 or ::", "Address the server binds to; '::' for IPv6.",
        aliases=(Alias("LISTEN_ADDRESS", KNATIVE, lambda raw: parse_host(raw.rpartition(":")[0].strip("[]")), "host:port such as 127.0.0.1:8080"),),
    )
    server_port: int = setting(
        "SERVER_PORT", 8080, parse_port, "an integer from 1 to 65535", "TCP port the server listens on.",
        aliases=(
            Alias("FUNC_PORT", KUBELESS),
            Alias("PORT", FUNCTIONS_FRAMEWORK),
            Alias("RUNTIME_PORT", FISSION),
            Alias("LISTEN_ADDRESS", KNATIVE, lambda raw: parse_port(raw.rpartition(":")[2]), "host:port such as 127.0.0.1:8080"),
            Alias("upstream_url", OPENFAAS, lambda raw: parse_port(str(urllib.parse.urlsplit(raw.strip()).port or "")), "a URL with a port such as http://127.0.0.1:5000"),
        ),
    )
    server_numthreads: int = setting(
        "SERVER_NUMTHREADS", 50, positive_int, "a positive integer", "Threads per worker process serving calls concurrently.",
        aliases=(Alias("CHERRYPY_NUMTHREADS", KUBELESS),),
    )
    server_call_timeout: float = setting(
        "SERVER_CALL_TIMEOUT", 180.0, non_negative_float, "a non-negative number of seconds",
        "Seconds a call may take before the client gets 408 (0 = no limit).",
        aliases=(Alias("FUNC_TIMEOUT", KYMA),),
    )
    server_adapter: str = setting(
        "SERVER_ADAPTER", "gunicorn", choice(*SERVER_ADAPTERS), "one of " + ", ".join(SERVER_ADAPTERS),
        "Server that serves the function: an HTTP server, or kafka to consume Kafka topics (docs/servers.md, docs/event-trigger.md).",
    )
    server_workers: int = setting("SERVER_WORKERS", 1, positive_int, "a positive integer", "Worker processes (gunicorn and granian).")
    server_max_body_size: int = setting(
        "SERVER_MAX_BODY_SIZE", 100 * 1024 * 1024, non_negative_int, "a non-negative integer of bytes",
        "Largest request body accepted, in bytes; larger bodies get 413 (0 = no limit).",
        aliases=(
            Alias("FUNC_BODY_MB_LIMIT", KYMA, megabytes, "a non-negative number of megabytes"),
            Alias("FUNC_MEMFILE_MAX", KUBELESS),
        ),
        default_doc="104857600 (100 MiB)",
    )
    server_graceful_timeout: float = setting(
        "SERVER_GRACEFUL_TIMEOUT", 25.0, non_negative_float, "a non-negative number of seconds",
        "Seconds in-flight calls may run after SIGTERM before the server exits (below Kubernetes' 30 s grace period).",
    )
    server_event_loop: str = setting(
        "SERVER_EVENT_LOOP", "auto", choice("auto", "off"), "auto or off",
        "auto: an async function is served on an event loop (ASGI); off: on server threads, like a sync one (docs/async.md).",
    )
    server_gc_threshold: int = setting(
        "SERVER_GC_THRESHOLD", 10_000, non_negative_int, "a non-negative integer",
        "Object allocations between two collections of the garbage collector's youngest generation"
        " (Python's own default is 700; 0 keeps it; docs/performance.md#garbage-collection).",
    )
    server_loop_blocked_seconds: float = setting(
        "SERVER_LOOP_BLOCKED_SECONDS", 2.0, non_negative_float, "a non-negative number of seconds",
        "An event loop blocked this long (sync code in async def) is logged and fails liveness (0 = not watched).",
    )
    server_debug_port: int = setting(
        "SERVER_DEBUG_PORT", 0, parse_port_or_zero, "0 or an integer from 1 to 65535",
        "Listen for a debugger on this port (debugpy, the funcwsgi[debug] extra; nodejs26: the Node inspector); 0 = off.",
    )
    server_debug_host: str = setting(
        "SERVER_DEBUG_HOST", "127.0.0.1", parse_host, "an IP address such as 127.0.0.1",
        "Address the debugger port listens on; another than loopback is warned about: whoever reaches it runs code.",
    )
    server_reload: bool = setting("SERVER_RELOAD", False, parse_bool, "true or false", "Reload when the function's folder changes (werkzeug adapter).")
    server_max_requests: int = setting(
        "SERVER_MAX_REQUESTS", 0, non_negative_int, "a non-negative integer",
        "Recycle a gunicorn worker after this many calls (0 = never); refused with the other adapters.",
    )
    # -- slow and hostile clients (docs/servers.md#slow-and-hostile-clients) ----------
    server_header_timeout: float = setting(
        "SERVER_HEADER_TIMEOUT", 10.0, positive_float, "a positive number of seconds",
        "Seconds a client may take to send a whole request head; then it gets 408 and is closed (gunicorn, granian).",
    )
    server_body_timeout: float = setting(
        "SERVER_BODY_TIMEOUT", 10.0, positive_float, "a positive number of seconds",
        "Seconds a request body may pause between two reads; then the client gets 408 and is closed (gunicorn).",
    )
    server_send_timeout: float = setting(
        "SERVER_SEND_TIMEOUT", 30.0, positive_float, "a positive number of seconds",
        "Seconds a response write may wait for a client that does not read; then the connection is closed (gunicorn).",
    )
    server_keepalive_timeout: float = setting(
        "SERVER_KEEPALIVE_TIMEOUT", 7200.0, positive_float, "a positive number of seconds",
        "Seconds an idle keep-alive connection stays open between calls: longer than the platform proxies' own idle timeouts,"
        " so that they close first (docs/deployment.md#idle-connections-behind-the-platforms-proxy).",
        default_doc="7200 (granian: unset, no connection is kept alive)",
    )
    server_max_connections: int = setting(
        "SERVER_MAX_CONNECTIONS", 1000, positive_int, "a positive integer",
        "Open connections per worker process; at the limit the longest-waiting idle or unfinished one is closed for a new one.",
    )
    server_queue_target: float = setting(
        "SERVER_QUEUE_TARGET", QUEUE_TARGET, positive_float, "a positive number of seconds",
        "Longest a call may wait to start (for a thread, or behind the event loop); a call that would wait longer gets 503"
        " with Retry-After at once (docs/servers.md#admission).",
        default_doc="1, or SERVER_CALL_TIMEOUT when shorter",
    )
    server_max_inflight: int | None = setting(
        "SERVER_MAX_INFLIGHT", None, optional_non_negative_int, "a non-negative integer",
        "Memory guard: calls per worker process running or waiting at once; more get 503 with Retry-After"
        " (0 = no bound; docs/servers.md#admission).",
        default_doc="1000",
    )
    # -- HTTP/2 (docs/servers.md#http2) -------------------------------------------------
    server_http2: bool | None = setting(
        "SERVER_HTTP2", None, optional_bool, "true or false",
        "Also serve HTTP/2 without TLS (h2c: prior knowledge and Upgrade) on SERVER_PORT; false turns it off"
        " (docs/servers.md#http2).",
        default_doc="true on gunicorn (plain functions), false on granian",
    )
    server_http2_max_streams: int = setting(
        "SERVER_HTTP2_MAX_STREAMS", 100, positive_int, "a positive integer",
        "Streams one HTTP/2 connection may have open at once (SETTINGS_MAX_CONCURRENT_STREAMS); more are refused.",
    )
    server_log_format: str = setting("SERVER_LOG_FORMAT", "json", choice("json", "text"), "json or text", "Log record format on stdout.")
    server_log_level: str = setting("SERVER_LOG_LEVEL", "info", choice(*LOG_LEVELS), "one of " + ", ".join(LOG_LEVELS), "Lowest level of log records written.")
    # Off by default, as in Kyma's runtimes and gunicorn: the platform's ingress usually logs
    # requests already, and a JSON record per call is most of the per-request cost.
    server_access_log: bool = setting(
        "SERVER_ACCESS_LOG", False, parse_bool, "true or false", "Write one access-log record per call.",
        aliases=(Alias("SERVER_INTERNAL_LOGGER", KYMA), Alias("KYMA_INTERNAL_LOGGER_ENABLED", KUBELESS)),
    )
    server_metrics: bool = setting(
        "SERVER_METRICS", True, parse_bool, "true or false",
        "Count calls, failures and durations and serve them at SERVER_METRICS_PATH.",
    )
    server_metrics_path: str = setting(
        "SERVER_METRICS_PATH", "/metrics", parse_path, "a path starting with /", "Path of the Prometheus metrics endpoint.",
    )
    server_metrics_otlp: bool = setting(
        "SERVER_METRICS_OTLP", False, parse_bool, "true or false",
        "Export the FaaS metrics over OTLP/HTTP to the trace collector too (TRACE_COLLECTOR_ENDPOINT's host, /v1/metrics)"
        " when OTEL_EXPORTER_OTLP_METRICS_ENDPOINT is unset.",
    )
    server_metrics_port: int = setting(
        "SERVER_METRICS_PORT", 0, parse_port_or_zero, "0 or an integer from 1 to 65535",
        "Serve SERVER_METRICS_PATH on this port of SERVER_HOST instead of the calls' port (0 = the calls' port).",
    )
    server_cloudevents: bool = setting(
        "SERVER_CLOUDEVENTS", True, parse_bool, "true or false",
        "Decode incoming CloudEvents (binary and structured); malformed ones get 400.",
    )
    server_cors_origins: tuple[str, ...] = setting(
        "SERVER_CORS_ORIGINS", (), parse_origins, "a comma-separated list of origins such as https://shop.example, or *",
        "Origins allowed to call the function from a browser; empty disables CORS.", default_doc="''",
    )
    server_cors_methods: tuple[str, ...] = setting(
        "SERVER_CORS_METHODS", ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"), parse_methods,
        "a comma-separated list of HTTP methods", "Methods a CORS preflight allows.", default_doc="GET,HEAD,POST,PUT,PATCH,DELETE",
    )
    server_cors_headers: tuple[str, ...] = setting(
        "SERVER_CORS_HEADERS", ("*",), parse_header_names, "a comma-separated list of header names, or *",
        "Request headers a CORS preflight allows; * allows what the browser asks for.", default_doc="*",
    )
    server_cors_max_age: int = setting(
        "SERVER_CORS_MAX_AGE", 600, non_negative_int, "a non-negative integer of seconds",
        "Seconds a browser may cache a CORS preflight answer.",
    )
    server_cors_credentials: bool = setting(
        "SERVER_CORS_CREDENTIALS", False, parse_bool, "true or false",
        "Allow cookies and credentials on cross-origin calls (needs explicit origins, not *).",
    )

    # -- the handler ------------------------------------------------------------
    handler_folder: str = setting(
        "HANDLER_FOLDER", "/", parse_str, "a folder path",
        "Folder holding the function's module; put on sys.path. Unset: the first of '/', '/kubeless', '/function' that holds the module.",
        aliases=(
            Alias("HANDLER_PATH", KYMA),
            Alias("FUNCTION_PATH", KUBELESS),
            Alias("KUBELESS_INSTALL_VOLUME", KUBELESS),
        ),
        default_doc="'/', '/kubeless' or '/function'",
    )
    handler_module_name: str = setting(
        "HANDLER_MODULE_NAME", "handler", parse_str, "a module name",
        "Module (file name without .py) holding the function. Unset: 'handler', or 'main' when only main.py exists.",
        aliases=(Alias("HANDLER_MOD_NAME", KYMA), Alias("MOD_NAME", KUBELESS)),
        default_doc="'handler' or 'main'",
    )
    handler_function_name: str = setting(
        "HANDLER_FUNCTION_NAME", "main", parse_str, "a function name or module.function",
        "Name of the function to call in the module; 'module.function' also sets the module.",
        aliases=(
            Alias("HANDLER_FUNC_NAME", KYMA),
            Alias("FUNC_HANDLER", KUBELESS),
            Alias("FUNCTION_TARGET", FUNCTIONS_FRAMEWORK),
        ),
    )
    handler_signature: str | None = setting(
        "HANDLER_SIGNATURE", None, optional_choice(*SIGNATURES), "one of " + ", ".join(SIGNATURES),
        "Force the calling convention instead of detecting it from the parameters.", default_doc="detected",
    )
    handler_framework_signature: str | None = setting(
        "HANDLER_FRAMEWORK_SIGNATURE", None, optional_choice(*FRAMEWORK_SIGNATURES), "one of " + ", ".join(FRAMEWORK_SIGNATURES),
        "How a Functions Framework function is called; unset: as its decorator registered it, else http.",
        aliases=(Alias("FUNCTION_SIGNATURE_TYPE", FUNCTIONS_FRAMEWORK),),
        default_doc="from the decorator",
    )
    handler_secrets_path: tuple[str, ...] = setting(
        "HANDLER_SECRETS_PATH", DEFAULT_SECRET_FOLDERS, parse_folders, "a ':'-separated list of absolute folder paths",
        "Folders sdk.secret(name) reads the file name from, the first holding it winning (docs/sdk.md#secrets).",
        default_doc=":".join(DEFAULT_SECRET_FOLDERS),
    )
    handler_platform: str | None = setting(
        "HANDLER_PLATFORM", None, optional_choice(*PLATFORMS), "one of " + ", ".join(PLATFORMS),
        "Force the platform whose contract the function is called with instead of recognising it (docs/platforms.md).",
        default_doc="recognised",
    )

    # -- other platforms' signals and their contracts' options (docs/platforms.md) ---
    lambda_handler: str | None = setting(
        "LAMBDA_HANDLER", None, parse_optional_str, "module.function or dir/module.function",
        "AWS Lambda's handler string; names the module and function to load.", aliases=(Alias("_HANDLER", AWS_LAMBDA),), default_doc="unset",
    )
    lambda_task_root: str | None = setting(
        "LAMBDA_TASK_ROOT", None, parse_optional_str, "a folder path", "Folder AWS Lambda's handler string is relative to.", default_doc="unset",
    )
    aws_lambda_function_name: str | None = setting(
        "AWS_LAMBDA_FUNCTION_NAME", None, parse_optional_str, "a string", "AWS Lambda function name: context.function_name.", default_doc="unset",
    )
    aws_execution_env: str | None = setting(
        "AWS_EXECUTION_ENV", None, parse_optional_str, "a string", "AWS Lambda's runtime name, such as AWS_Lambda_python3.12.", default_doc="unset",
    )
    aws_lambda_function_version: str = setting(
        "AWS_LAMBDA_FUNCTION_VERSION", "$LATEST", parse_str, "a string", "AWS Lambda function version: context.function_version.",
    )
    aws_lambda_function_memory_size: int = setting(
        "AWS_LAMBDA_FUNCTION_MEMORY_SIZE", 128, positive_int, "a positive integer of megabytes",
        "AWS Lambda memory size: context.memory_limit_in_mb.",
    )
    aws_lambda_log_group_name: str | None = setting(
        "AWS_LAMBDA_LOG_GROUP_NAME", None, parse_optional_str, "a string", "context.log_group_name; unset: /aws/lambda/ and the function name.",
        default_doc="derived",
    )
    aws_lambda_log_stream_name: str | None = setting(
        "AWS_LAMBDA_LOG_STREAM_NAME", None, parse_optional_str, "a string", "context.log_stream_name; unset: made from the date and process.",
        default_doc="derived",
    )
    aws_region: str = setting("AWS_REGION", "us-east-1", parse_str, "an AWS region name", "Region in context.invoked_function_arn.")
    lambda_payload_format: str | None = setting(
        "LAMBDA_PAYLOAD_FORMAT", None, optional_choice(*LAMBDA_PAYLOAD_FORMATS), "1.0 or 2.0",
        "API Gateway payload format of Lambda events: 2.0 (HTTP API, function URLs) or 1.0 (REST API).",
        default_doc="template.yaml's event type, else 2.0",
    )
    functions_worker_runtime: str | None = setting(
        "FUNCTIONS_WORKER_RUNTIME", None, parse_optional_str, "a language name such as python",
        "Azure Functions' worker language; python marks an Azure Functions app.", default_doc="unset",
    )
    openfaas_fprocess: str | None = setting(
        "OPENFAAS_FPROCESS", None, parse_optional_str, "a command line", "OpenFaaS watchdog's fprocess: marks an OpenFaaS function.",
        aliases=(Alias("fprocess", OPENFAAS),), default_doc="unset",
    )
    openfaas_mode: str | None = setting(
        "OPENFAAS_MODE", None, parse_optional_str, "http", "OpenFaaS watchdog's mode.", aliases=(Alias("mode", OPENFAAS),), default_doc="unset",
    )
    openfaas_raw_body: bool = setting(
        "OPENFAAS_RAW_BODY", False, parse_bool, "true or false",
        "OpenFaaS python3-flask: hand handle(req) the body as bytes instead of text.", aliases=(Alias("RAW_BODY", OPENFAAS),),
    )
    fission_userfunc_volume: str | None = setting(
        "FISSION_USERFUNC_VOLUME", None, parse_optional_str, "a folder path",
        "Folder Fission's fetcher puts the function in; marks a Fission environment.", aliases=(Alias("USERFUNCVOL", FISSION),),
        default_doc="unset (/userfunc when it exists)",
    )
    knative_listen_address: str | None = setting(
        "KNATIVE_LISTEN_ADDRESS", None, parse_optional_str, "host:port", "Knative func-python's LISTEN_ADDRESS: marks a func-python function.",
        aliases=(Alias("LISTEN_ADDRESS", KNATIVE),), default_doc="unset",
    )

    # -- endpoints the controller injects ---------------------------------------
    trace_collector_endpoint: str | None = setting(
        "TRACE_COLLECTOR_ENDPOINT", None, parse_optional_str, "an OTLP/HTTP URL",
        "Where spans are exported (OTLP/HTTP); unset disables tracing.", default_doc="unset",
    )
    otel_exporter_otlp_metrics_endpoint: str | None = setting(
        "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", None, parse_optional_str, "an OTLP/HTTP URL",
        "Where the FaaS metrics (faas.invoke_duration, ...) are exported over OTLP/HTTP, beside /metrics; unset: not exported.",
        default_doc="unset",
    )
    publisher_proxy_address: str | None = setting(
        "PUBLISHER_PROXY_ADDRESS", None, parse_optional_str, "a URL",
        "Where sdk.emit_cloud_event posts events; unset disables publishing.", default_doc="unset",
    )
    publisher_proxy_timeout: float = setting(
        "PUBLISHER_PROXY_TIMEOUT", 10.0, positive_float, "a positive number of seconds",
        "Seconds sdk.emit_cloud_event waits for the publisher proxy before giving up.",
    )
    otel_propagators: tuple[str, ...] = setting(
        "OTEL_PROPAGATORS", DEFAULT_PROPAGATORS, parse_list, "a comma-separated list of propagator names",
        "Trace context formats read from calls and written to outgoing requests (tracecontext, baggage, b3, b3multi, none).",
        default_doc="tracecontext,baggage,b3multi",
    )

    # -- the Kafka event trigger (SERVER_ADAPTER=kafka) ---------------------------
    kafka_brokers: tuple[str, ...] = setting(
        "KAFKA_BROKERS", (), parse_brokers, "a comma-separated list of host:port",
        "Kafka bootstrap brokers the kafka adapter connects to.", default_doc="unset",
    )
    kafka_topics: tuple[str, ...] = setting(
        "KAFKA_TOPICS", (), parse_list, "a comma-separated list of topic names",
        "Topics whose records are delivered to the function.", default_doc="unset",
    )
    kafka_group_id: str = setting(
        "KAFKA_GROUP_ID", "", parse_str, "a consumer group id",
        "Consumer group shared by all replicas of the function.", default_doc="FUNC_NAME, else 'funcwsgi'",
    )
    kafka_reply_topic: str | None = setting(
        "KAFKA_REPLY_TOPIC", None, parse_optional_str, "a topic name",
        "Topic that CloudEvents returned by the function are produced to; unset drops them.", default_doc="unset",
    )
    kafka_dead_letter_topic: str | None = setting(
        "KAFKA_DEAD_LETTER_TOPIC", None, parse_optional_str, "a topic name",
        "Topic a record goes to, with its error, once its retries are used up; unset retries forever.",
        default_doc="unset",
    )
    kafka_retries: int = setting(
        "KAFKA_RETRIES", 3, non_negative_int, "a non-negative integer",
        "Retries of a failed record before it is dead-lettered (needs KAFKA_DEAD_LETTER_TOPIC).",
    )
    kafka_retry_backoff: float = setting(
        "KAFKA_RETRY_BACKOFF", 1.0, positive_float, "a positive number of seconds",
        "Wait before the first retry of a failed record; doubled for each further retry.",
    )
    kafka_retry_backoff_max: float = setting(
        "KAFKA_RETRY_BACKOFF_MAX", 60.0, positive_float, "a positive number of seconds",
        "Longest wait between two retries of a failed record.",
    )
    kafka_security_protocol: str | None = setting(
        "KAFKA_SECURITY_PROTOCOL", None, optional_choice(*KAFKA_PROTOCOLS), "one of " + ", ".join(KAFKA_PROTOCOLS),
        "Protocol used to talk to the brokers (security.protocol).", default_doc=KAFKA_DEFAULT_PROTOCOL,
    )
    kafka_sasl_mechanism: str | None = setting(
        "KAFKA_SASL_MECHANISM", None, parse_optional_str, "PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER",
        "SASL mechanism (sasl.mechanism).", default_doc="unset",
    )
    kafka_sasl_username: str | None = setting(
        "KAFKA_SASL_USERNAME", None, parse_optional_str, "a user name", "SASL user name (sasl.username).", default_doc="unset",
    )
    kafka_sasl_password: str | None = setting(
        "KAFKA_SASL_PASSWORD", None, parse_optional_str, "a password", "SASL password (sasl.password).",
        default_doc="unset", secret=True,
    )
    kafka_ssl_ca_location: str | None = setting(
        "KAFKA_SSL_CA_LOCATION", None, parse_optional_str, "a file path",
        "CA certificate(s) that verify the brokers (ssl.ca.location).", default_doc="unset",
    )
    kafka_ssl_certificate_location: str | None = setting(
        "KAFKA_SSL_CERTIFICATE_LOCATION", None, parse_optional_str, "a file path",
        "Client certificate for mutual TLS (ssl.certificate.location).", default_doc="unset",
    )
    kafka_ssl_key_location: str | None = setting(
        "KAFKA_SSL_KEY_LOCATION", None, parse_optional_str, "a file path",
        "Client private key for mutual TLS (ssl.key.location).", default_doc="unset",
    )
    kafka_client_config: dict[str, str] = setting(
        "KAFKA_CLIENT_CONFIG", {}, parse_mapping, "a JSON object or k=v,k2=v2",
        "Further librdkafka properties for the consumer and producer; they win over the above.",
        default_doc="''", secret=True,
    )

    #: The fields the environment or an override set (not a setting): what start-up
    #: must not second-guess when it looks for the function's files.
    given: frozenset[str] = field(default=frozenset(), repr=False, compare=False)

    # ---------------------------------------------------------------------------

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> Config:
        """Read every setting once from ``environ`` (default ``os.environ``).

        ``overrides`` are field names with already-typed values; they win over
        the mapping. A bad value raises :class:`ConfigError` naming the
        variable, the value and what was expected.
        """
        if environ is None:
            environ = os.environ
        values: dict[str, Any] = {}
        origins: dict[str, str] = {}  # field -> the name its value came from, for messages
        known = {f.name for f in dataclasses.fields(cls) if "spec" in f.metadata}
        unknown = set(overrides) - known
        if unknown:
            raise ConfigError(f"unknown setting(s) {', '.join(sorted(unknown))}; known: {', '.join(sorted(known))}")
        for item in dataclasses.fields(cls):
            if "spec" not in item.metadata:
                continue
            if item.name in overrides:
                values[item.name] = overrides[item.name]
                origins[item.name] = item.name
                continue
            spec: Spec = item.metadata["spec"]
            found = lookup(spec, environ)
            if found is None:
                continue
            name, raw, parse, expected = found
            try:
                value = parse(raw)
            except (ValueError, TypeError, json.JSONDecodeError):
                raise ConfigError(f"{name}={raw!r} is invalid: expected {expected}") from None
            values[item.name] = value
            origins[item.name] = name
        _split_handler_string(values, origins)
        if "server_port" not in origins and (values.get("fission_userfunc_volume") or values.get("handler_platform") == "fission"):
            values["server_port"] = FISSION_PORT  # the port Fission's router calls an environment on
        timeout = values.get("server_call_timeout", QUEUE_TARGET)
        if "server_queue_target" not in origins and 0 < timeout < QUEUE_TARGET:
            values["server_queue_target"] = timeout  # the default never exceeds a shorter call timeout
        config = cls(**values, given=frozenset(origins))
        config.check()
        return config

    def check(self) -> None:
        """Refuse contradictory or unusable combinations."""
        if not self.handler_module_name or not self.handler_module_name.replace(".", "_").isidentifier():
            raise ConfigError(
                f"HANDLER_MODULE_NAME={self.handler_module_name!r} is invalid: expected a Python module name such as 'handler'"
            )
        if not self.handler_function_name.isidentifier():
            raise ConfigError(
                f"HANDLER_FUNCTION_NAME={self.handler_function_name!r} is invalid: expected a Python identifier such as 'main'"
            )
        for name, url in (
            ("TRACE_COLLECTOR_ENDPOINT", self.trace_collector_endpoint),
            ("PUBLISHER_PROXY_ADDRESS", self.publisher_proxy_address),
            ("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", self.otel_exporter_otlp_metrics_endpoint),
        ):
            if url is not None and not _is_http_url(url):
                raise ConfigError(f"{name}={url!r} is invalid: expected an http:// or https:// URL")
        if self.server_metrics_port and self.server_metrics_port == self.server_port:
            raise ConfigError(
                f"SERVER_METRICS_PORT={self.server_metrics_port} is refused: it is SERVER_PORT; choose another port, or 0 to serve metrics on SERVER_PORT"
            )
        if self.server_debug_port:
            if self.server_debug_port in (self.server_port, self.server_metrics_port):
                raise ConfigError(f"SERVER_DEBUG_PORT={self.server_debug_port} is refused: the server already listens there; choose another port")
            if self.server_workers > 1:
                raise ConfigError(
                    f"SERVER_DEBUG_PORT={self.server_debug_port} is refused with SERVER_WORKERS={self.server_workers}: "
                    "one process listens for the debugger; expected SERVER_WORKERS=1"
                )
        if self.server_metrics_otlp and not (self.trace_collector_endpoint or self.otel_exporter_otlp_metrics_endpoint):
            raise ConfigError(
                "SERVER_METRICS_OTLP=true is refused without TRACE_COLLECTOR_ENDPOINT: "
                "expected the trace collector to send metrics to, or OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"
            )
        if self.server_max_requests and self.server_adapter not in RECYCLING_ADAPTERS:
            raise ConfigError(
                f"SERVER_MAX_REQUESTS='{self.server_max_requests}' is refused with SERVER_ADAPTER={self.server_adapter!r}: "
                f"only {', '.join(RECYCLING_ADAPTERS)} recycles a worker after a number of calls"
            )
        if self.server_http2 and self.server_adapter not in HTTP2_ADAPTERS:
            raise ConfigError(
                f"SERVER_HTTP2=true is refused with SERVER_ADAPTER={self.server_adapter!r}: "
                f"HTTP/2 is served by {', '.join(HTTP2_ADAPTERS)} only"
            )
        if self.server_cors_credentials and "*" in self.server_cors_origins:
            raise ConfigError(
                "SERVER_CORS_CREDENTIALS=true with SERVER_CORS_ORIGINS='*' is refused: browsers reject credentials "
                "for a wildcard origin; list the allowed origins instead"
            )
        if self.server_adapter == "kafka":
            if not self.kafka_brokers:
                raise ConfigError("KAFKA_BROKERS is not set: expected a comma-separated list of host:port for SERVER_ADAPTER=kafka")
            if not self.kafka_topics:
                raise ConfigError("KAFKA_TOPICS is not set: expected a comma-separated list of topic names for SERVER_ADAPTER=kafka")
        if self.server_call_timeout and self.server_queue_target > self.server_call_timeout:
            raise ConfigError(
                f"SERVER_QUEUE_TARGET={self.server_queue_target:g} is invalid: expected at most SERVER_CALL_TIMEOUT "
                f"({self.server_call_timeout:g}), since a caller waits no longer than a call may take"
            )
        if self.kafka_retry_backoff_max < self.kafka_retry_backoff:
            raise ConfigError(
                f"KAFKA_RETRY_BACKOFF_MAX={self.kafka_retry_backoff_max:g} is invalid: "
                f"expected at least KAFKA_RETRY_BACKOFF ({self.kafka_retry_backoff:g})"
            )

    @property
    def handler_path(self) -> str:
        """The handler file, as the start-up line prints it."""
        return os.path.join(self.handler_folder, self.handler_module_name + ".py")

    @property
    def otlp_metrics_endpoint(self) -> str | None:
        """Where the FaaS metrics go: OTEL_EXPORTER_OTLP_METRICS_ENDPOINT, else (SERVER_METRICS_OTLP) the trace collector's /v1/metrics."""
        if self.otel_exporter_otlp_metrics_endpoint:
            return self.otel_exporter_otlp_metrics_endpoint
        if self.server_metrics_otlp and self.trace_collector_endpoint:
            parts = urllib.parse.urlsplit(self.trace_collector_endpoint)
            return f"{parts.scheme}://{parts.netloc}/v1/metrics"
        return None

    @property
    def http2(self) -> bool:
        """Whether HTTP/2 is served: SERVER_HTTP2, else whether the adapter serves it by default."""
        return self.server_adapter in HTTP2_BY_DEFAULT if self.server_http2 is None else self.server_http2

    @property
    def max_inflight(self) -> int:
        """The memory guard on calls running or waiting per worker process (threads or event loop); 0 for none."""
        return MAX_INFLIGHT if self.server_max_inflight is None else self.server_max_inflight

    @property
    def kafka_group(self) -> str:
        """The consumer group: KAFKA_GROUP_ID, else the function's name."""
        return self.kafka_group_id or self.func_name or "funcwsgi"

    @property
    def kafka_protocol(self) -> str:
        """The protocol the Kafka client speaks: KAFKA_SECURITY_PROTOCOL, else the client's default."""
        return self.kafka_security_protocol or KAFKA_DEFAULT_PROTOCOL

    def replace(self, **changes: Any) -> Config:
        return dataclasses.replace(self, **changes)


def _split_handler_string(values: dict[str, Any], origins: dict[str, str]) -> None:
    """``FUNC_HANDLER=module.function``, as Kubeless hands handlers to custom runtimes."""
    handler = values.get("handler_function_name")
    if not isinstance(handler, str) or "." not in handler:
        return
    module, _, function = handler.rpartition(".")
    given = origins["handler_function_name"]
    if not module or not function:
        raise ConfigError(f"{given}={handler!r} is invalid: expected a function name or module.function such as 'handler.main'")
    if "handler_module_name" in values and values["handler_module_name"] != module:
        other = origins["handler_module_name"]
        raise ConfigError(
            f"{given}={handler!r} names module {module!r} but {other}={values['handler_module_name']!r}; "
            "set the module in one of them only"
        )
    values["handler_module_name"] = module
    values["handler_function_name"] = function
    origins["handler_module_name"] = given


def _is_http_url(url: str) -> bool:
    parts = urllib.parse.urlsplit(url)
    return parts.scheme in ("http", "https") and bool(parts.netloc)



def specs() -> list[tuple[str, Any, Spec]]:
    """(field name, default, spec) for every setting, in declaration order."""
    result = []
    for item in dataclasses.fields(Config):
        if "spec" not in item.metadata:
            continue
        if item.default is not dataclasses.MISSING:
            default: Any = item.default
        elif item.default_factory is not dataclasses.MISSING:
            default = item.default_factory()
        else:  # every setting has a default: a field without one is not a setting
            continue
        result.append((item.name, default, item.metadata["spec"]))
    return result


def known_env_names() -> frozenset[str]:
    names: set[str] = set()
    for _, _, spec in specs():
        names.add(spec.env)
        names.update(alias.name for alias in spec.aliases)
    return frozenset(names)
