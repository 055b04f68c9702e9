"""Every setting with a wrong type, range or format: `funcwsgi serve` exits 2 with one line naming it.

``BAD_VALUES`` has one wrong value for every setting that can be wrong;
``FREE_FORM`` lists the settings that accept any text. A test checks that the
two together cover every declared setting, so a new setting must be added here.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from funcwsgi.config import specs

from ..support.paths import function_folder
from ..support.ports import free_port
from ..support.processes import SERVE, base_env, run_to_exit

BAD_VALUES: dict[str, str] = {
    "HANDLER_PLATFORM": "heroku",
    "LAMBDA_PAYLOAD_FORMAT": "3.0",
    "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "0",
    "OPENFAAS_RAW_BODY": "maybe",
    "FUNC_LABELS": "team",
    "FUNC_ANNOTATIONS": "[1, 2]",
    "FUNC_MEMORY_LIMIT": "lots",
    "SERVER_HOST": "no.such.host.invalid",
    "SERVER_PORT": "70000",
    "SERVER_NUMTHREADS": "0",
    "SERVER_CALL_TIMEOUT": "soon",
    "SERVER_ADAPTER": "tomcat",
    "SERVER_WORKERS": "-2",
    "SERVER_MAX_BODY_SIZE": "1e9",
    "SERVER_GRACEFUL_TIMEOUT": "inf",
    "SERVER_RELOAD": "maybe",
    "SERVER_DEBUG_PORT": "70000",
    "SERVER_DEBUG_HOST": "debugger.invalid",
    "SERVER_MAX_REQUESTS": "-1",
    "SERVER_HEADER_TIMEOUT": "0",
    "SERVER_BODY_TIMEOUT": "-5",
    "SERVER_SEND_TIMEOUT": "forever",
    "SERVER_KEEPALIVE_TIMEOUT": "nan",
    "SERVER_MAX_CONNECTIONS": "0",
    "SERVER_HTTP2": "h2c",
    "SERVER_HTTP2_MAX_STREAMS": "0",
    "SERVER_MAX_INFLIGHT": "lots",
    "SERVER_QUEUE_TARGET": "soon",
    "SERVER_EVENT_LOOP": "sometimes",
    "SERVER_LOOP_BLOCKED_SECONDS": "inf",
    "SERVER_GC_THRESHOLD": "-1",
    "SERVER_LOG_FORMAT": "xml",
    "SERVER_LOG_LEVEL": "loud",
    "SERVER_ACCESS_LOG": "2",
    "SERVER_METRICS": "enabled!",
    "SERVER_METRICS_PATH": "metrics",
    "SERVER_METRICS_PORT": "99999",
    "SERVER_METRICS_OTLP": "maybe",
    "SERVER_CLOUDEVENTS": "nope",
    "SERVER_CORS_ORIGINS": "shop.example",
    "SERVER_CORS_METHODS": "GET,P0ST",
    "SERVER_CORS_HEADERS": "content type",
    "SERVER_CORS_MAX_AGE": "ten",
    "SERVER_CORS_CREDENTIALS": "sometimes",
    "HANDLER_MODULE_NAME": "my-handler",
    "HANDLER_FUNCTION_NAME": "not a name",
    "HANDLER_SIGNATURE": "whatever",
    "HANDLER_SECRETS_PATH": "secrets",
    "HANDLER_FRAMEWORK_SIGNATURE": "event",
    "TRACE_COLLECTOR_ENDPOINT": "collector:4318",
    "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "collector:4318/v1/metrics",
    "PUBLISHER_PROXY_ADDRESS": "/publish",
    "PUBLISHER_PROXY_TIMEOUT": "0",
    "OTEL_PROPAGATORS": "tracecontext,nosuch",
    "KAFKA_BROKERS": "broker-without-port",
    "KAFKA_RETRIES": "-1",
    "KAFKA_RETRY_BACKOFF": "0",
    "KAFKA_RETRY_BACKOFF_MAX": "soon",
    "KAFKA_SECURITY_PROTOCOL": "tls",
    "KAFKA_CLIENT_CONFIG": "acks",
    # compatibility names with units of their own
    "FUNC_BODY_MB_LIMIT": "-5",
    "FUNC_TIMEOUT": "-1",
}
#: Settings whose value is free text: any value is a valid one.
FREE_FORM = {"FUNC_NAME", "FUNC_NAMESPACE", "FUNC_RUNTIME", "FUNC_VERSION"} | {
    # names, credentials and files the Kafka client itself checks when it connects
    "KAFKA_TOPICS", "KAFKA_GROUP_ID", "KAFKA_REPLY_TOPIC", "KAFKA_DEAD_LETTER_TOPIC", "KAFKA_SASL_MECHANISM",
    "KAFKA_SASL_USERNAME", "KAFKA_SASL_PASSWORD", "KAFKA_SSL_CA_LOCATION", "KAFKA_SSL_CERTIFICATE_LOCATION", "KAFKA_SSL_KEY_LOCATION",
} | {
    # other platforms' names and signals (docs/platforms.md): whatever those platforms set; the handler
    # string and the folders are checked when the function is located and loaded
    "LAMBDA_HANDLER", "LAMBDA_TASK_ROOT", "AWS_LAMBDA_FUNCTION_NAME", "AWS_EXECUTION_ENV", "AWS_LAMBDA_FUNCTION_VERSION",
    "AWS_LAMBDA_LOG_GROUP_NAME", "AWS_LAMBDA_LOG_STREAM_NAME", "AWS_REGION", "FUNCTIONS_WORKER_RUNTIME", "OPENFAAS_FPROCESS",
    "OPENFAAS_MODE", "FISSION_USERFUNC_VOLUME", "KNATIVE_LISTEN_ADDRESS",
}
#: HANDLER_FOLDER is checked when the function is loaded: see the folder tests below.
CHECKED_AT_LOAD = {"HANDLER_FOLDER"}


def test_every_setting_has_a_bad_value_or_is_free_form():
    declared = {spec.env for _, _, spec in specs()}
    assert declared == (set(BAD_VALUES) & declared) | FREE_FORM | CHECKED_AT_LOAD


def _serve(**settings: str):
    env = base_env(HANDLER_FOLDER=function_folder("hello"), SERVER_HOST="127.0.0.1", SERVER_PORT=str(free_port()))
    env.update(settings)
    return run_to_exit(SERVE, env)


def _one_error_line(result) -> str:
    assert result.returncode == 2, (result.returncode, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("funcwsgi: error: "), result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    assert "Starting python314 server" not in result.stdout
    return lines[0]


@pytest.mark.parametrize(("name", "value"), sorted(BAD_VALUES.items()), ids=sorted(BAD_VALUES))
def test_a_bad_value_exits_2_with_one_line_naming_it(name, value):
    line = _one_error_line(_serve(**{name: value}))
    assert f"{name}={value!r}" in line or f"{name}='{value}'" in line, line
    assert "expected" in line or "refused" in line or "no propagator" in line, line


def test_a_port_in_use_exits_2_with_one_line():
    import socket

    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        line = _one_error_line(_serve(SERVER_PORT=str(port)))
    assert line == f"funcwsgi: error: cannot listen on SERVER_HOST='127.0.0.1' SERVER_PORT={port}: Address already in use"


def test_handler_folder_that_is_a_file(tmp_path):
    path = tmp_path / "handler.py"
    path.write_text("def main(req, res): pass\n")
    line = _one_error_line(_serve(HANDLER_FOLDER=str(path)))
    assert line == f"funcwsgi: error: HANDLER_FOLDER {str(path)!r} is a file, expected the folder that holds the function"


def test_handler_folder_that_is_empty(tmp_path):
    line = _one_error_line(_serve(HANDLER_FOLDER=str(tmp_path)))
    assert line == f"funcwsgi: error: no handler.py in {tmp_path}: the folder is empty"


def test_handler_folder_that_does_not_exist(tmp_path):
    line = _one_error_line(_serve(HANDLER_FOLDER=str(tmp_path / "missing")))
    assert line == f"funcwsgi: error: HANDLER_FOLDER {str(tmp_path / 'missing')!r} does not exist"


def test_handler_folder_that_cannot_be_read():
    import shutil
    import tempfile

    base = tempfile.mkdtemp(prefix="funcwsgi-unreadable-")
    os.chmod(base, 0o755)  # reachable by anyone; only the folder inside is locked
    folder = Path(base) / "locked"
    folder.mkdir()
    (folder / "handler.py").write_text("def main(req, res): pass\n")
    folder.chmod(0)
    try:
        status, stderr = _serve_as_unprivileged_user(HANDLER_FOLDER=str(folder), SERVER_HOST="127.0.0.1", SERVER_PORT=str(free_port()))
    finally:
        folder.chmod(0o755)
        shutil.rmtree(base)
    assert status == 2, stderr
    assert stderr.strip().splitlines() == [f"funcwsgi: error: HANDLER_FOLDER {str(folder)!r} cannot be read: Permission denied"]


def _serve_as_unprivileged_user(**settings: str) -> tuple[int, str]:
    """`funcwsgi serve`'s entry point in a forked child that runs as nobody, as the container runs.

    Root reads every folder, so the child drops to uid 65534 first. It is a
    fork of this process rather than a new interpreter because an unprivileged
    user may not be allowed to start this checkout's interpreter at all.
    """
    # Imported before dropping privileges: nobody may not read this interpreter's library.
    import funcwsgi.adapters.gunicorn  # noqa: F401
    import funcwsgi.cli.commands.serve  # noqa: F401
    import funcwsgi.compat.aws_lambda  # noqa: F401 - the platform signals are asked at every start
    import funcwsgi.compat.azure  # noqa: F401
    import funcwsgi.compat.fission  # noqa: F401
    import funcwsgi.compat.knative  # noqa: F401
    import funcwsgi.compat.openfaas  # noqa: F401
    from funcwsgi.cli import main

    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            sys.stderr = os.fdopen(write_end, "w")  # the test runner's capture is not a file descriptor
            os.environ.clear()
            os.environ.update(base_env(**settings))
            if os.geteuid() == 0:
                os.setgid(65534)
                os.setuid(65534)
            code = main(["serve"])
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else 1
        except BaseException:
            code = 99
        sys.stderr.flush()
        os._exit(code)
    os.close(write_end)
    with os.fdopen(read_end) as stderr:
        text = stderr.read()
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), text



@pytest.mark.parametrize(
    ("scenario", "expected"),
    [
        pytest.param("hook_needs_arguments", "start() in {folder}/handler.py requires 1 argument(s) (database_url)", id="arity"),
        pytest.param("hook_not_callable", "'ready' in {folder}/handler.py is a str, not a function", id="not-callable"),
    ],
)
def test_a_bad_hook_exits_2_with_one_line_before_serving(scenario, expected):
    line = _one_error_line(_serve(HANDLER_FOLDER=function_folder(scenario)))
    assert expected.format(folder=function_folder(scenario)) in line, line
