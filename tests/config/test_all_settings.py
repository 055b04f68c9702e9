from __future__ import annotations

import ast
import dataclasses
import importlib.metadata
import os
import socket
from pathlib import Path

import pytest

import funcwsgi.config
from funcwsgi.config import Config, config_fields, known_env_names, specs
from funcwsgi.errors import ConfigError


def test_defaults_are_the_reference_documents():
    config = Config.from_env({})
    assert config.func_name == ""
    assert config.func_namespace == ""
    assert config.func_labels == {}
    assert config.func_annotations == {}
    assert config.func_runtime == "python314"
    assert config.server_host == "0.0.0.0"
    assert config.server_port == 8080
    assert config.server_numthreads == 50
    assert config.server_call_timeout == 180.0
    assert config.handler_folder == "/"
    assert config.handler_module_name == "handler"
    assert config.handler_function_name == "main"
    assert config.trace_collector_endpoint is None
    assert config.publisher_proxy_address is None
    assert config.handler_path == "/handler.py"


def test_config_is_frozen():
    config = Config.from_env({})
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.server_port = 1  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del config.server_port  # type: ignore[misc]


def test_no_method_of_config_is_compiled_at_import():
    """dataclasses compiles generated source for __init__, __repr__, __eq__ and a frozen __setattr__: for
    Config's hundred fields, some 36 M instructions at every start (issue 44). Config's own are written in its module."""
    for name in ("__init__", "__repr__", "__eq__", "__setattr__", "__delattr__"):
        assert getattr(Config, name).__code__.co_filename == funcwsgi.config.all_settings.__file__, name


def test_config_constructs_compares_and_shows_as_a_dataclass_would():
    config = Config(server_port=9000, func_labels={"a": "1"})
    assert config.server_port == 9000 and config.func_labels == {"a": "1"}
    assert config.server_host == "0.0.0.0" and config.given == frozenset()
    assert Config().func_labels is not Config().func_labels  # a dict default is made per object
    with pytest.raises(TypeError, match="server_prot"):
        Config(server_prot=9000)
    assert config == Config(server_port=9000, func_labels={"a": "1"}, given=frozenset({"server_port"}))  # given is not compared
    assert config != Config(server_port=9001, func_labels={"a": "1"})
    assert config != "Config"
    assert config.replace(server_port=1).server_port == 1 and config.replace(server_port=1).func_labels == {"a": "1"}
    with pytest.raises(TypeError, match="server_prot"):
        config.replace(server_prot=1)
    assert [item.name for item in config_fields()][:2] == ["func_name", "func_namespace"] and [item.name for item in config_fields()][-2:] == ["given", "named"]
    assert Config.server_port == 8080 and config_fields()[0].metadata["spec"].env == "FUNC_NAME"
    shown = repr(config)
    assert shown.startswith("Config(func_name='', ") and "server_port=9000" in shown and "given" not in shown and "named" not in shown
    assert shown.count("=") >= len(specs())
    with pytest.raises(TypeError):
        hash(config)


def test_every_setting_is_declared_with_a_description():
    for name, _, spec in specs():
        assert spec.env == name.upper(), name
        assert spec.description.endswith("."), spec.env
        assert spec.expected, spec.env


@pytest.mark.parametrize(
    ("environ", "field", "expected"),
    [
        pytest.param({"SERVER_PORT": "9000"}, "server_port", 9000, id="port"),
        pytest.param({"SERVER_CALL_TIMEOUT": "2.5"}, "server_call_timeout", 2.5, id="timeout-float"),
        pytest.param({"SERVER_NUMTHREADS": "4"}, "server_numthreads", 4, id="threads"),
        pytest.param({"FUNC_LABELS": '{"app": "shop", "tier": 2}'}, "func_labels", {"app": "shop", "tier": "2"}, id="labels-json"),
        pytest.param({"FUNC_LABELS": "app=shop, tier=web"}, "func_labels", {"app": "shop", "tier": "web"}, id="labels-kv"),
        pytest.param({"FUNC_ANNOTATIONS": "a=1"}, "func_annotations", {"a": "1"}, id="annotations"),
        pytest.param({"TRACE_COLLECTOR_ENDPOINT": ""}, "trace_collector_endpoint", None, id="empty-endpoint-is-unset"),
        pytest.param({"SERVER_RELOAD": "yes"}, "server_reload", True, id="bool"),
        pytest.param({"HANDLER_SIGNATURE": "req"}, "handler_signature", "req", id="signature"),
    ],
)
def test_values_are_parsed(environ, field, expected):
    assert getattr(Config.from_env(environ), field) == expected


@pytest.mark.parametrize(
    ("environ", "field", "expected"),
    [
        # python314 (Kyma) names
        pytest.param({"HANDLER_PATH": "/src"}, "handler_folder", "/src", id="HANDLER_PATH"),
        pytest.param({"HANDLER_MOD_NAME": "fn"}, "handler_module_name", "fn", id="HANDLER_MOD_NAME"),
        pytest.param({"HANDLER_FUNC_NAME": "run"}, "handler_function_name", "run", id="HANDLER_FUNC_NAME"),
        pytest.param({"FUNC_TIMEOUT": "7"}, "server_call_timeout", 7.0, id="FUNC_TIMEOUT"),
        pytest.param({"SERVICE_NAMESPACE": "prod"}, "func_namespace", "prod", id="SERVICE_NAMESPACE"),
        pytest.param({"FUNC_BODY_MB_LIMIT": "1.5"}, "server_max_body_size", 1572864, id="FUNC_BODY_MB_LIMIT-in-MB"),
        # Kyma <=3.12 / Kubeless names
        pytest.param({"FUNCTION_PATH": "/fn"}, "handler_folder", "/fn", id="FUNCTION_PATH"),
        pytest.param({"KUBELESS_INSTALL_VOLUME": "/kubeless"}, "handler_folder", "/kubeless", id="KUBELESS_INSTALL_VOLUME"),
        pytest.param({"MOD_NAME": "foo"}, "handler_module_name", "foo", id="MOD_NAME"),
        pytest.param({"FUNC_HANDLER": "foo"}, "handler_function_name", "foo", id="FUNC_HANDLER"),
        pytest.param({"FUNC_PORT": "8081"}, "server_port", 8081, id="FUNC_PORT"),
        pytest.param({"FUNC_MEMFILE_MAX": "2048"}, "server_max_body_size", 2048, id="FUNC_MEMFILE_MAX-in-bytes"),
        pytest.param({"CHERRYPY_NUMTHREADS": "8"}, "server_numthreads", 8, id="CHERRYPY_NUMTHREADS"),
    ],
)
def test_compatibility_aliases(environ, field, expected):
    assert getattr(Config.from_env(environ), field) == expected


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        pytest.param({"HANDLER_FOLDER": "/a", "HANDLER_PATH": "/b", "FUNCTION_PATH": "/c"}, "/a", id="reference-name-wins"),
        pytest.param({"HANDLER_PATH": "/b", "FUNCTION_PATH": "/c", "KUBELESS_INSTALL_VOLUME": "/d"}, "/b", id="python314-beats-legacy"),
        pytest.param({"FUNCTION_PATH": "/c", "KUBELESS_INSTALL_VOLUME": "/d"}, "/c", id="legacy-in-order"),
    ],
)
def test_alias_precedence(environ, expected):
    assert Config.from_env(environ).handler_folder == expected


def test_alias_precedence_with_units():
    config = Config.from_env({"SERVER_MAX_BODY_SIZE": "10", "FUNC_BODY_MB_LIMIT": "1", "FUNC_MEMFILE_MAX": "20"})
    assert config.server_max_body_size == 10
    assert Config.from_env({"FUNC_BODY_MB_LIMIT": "1", "FUNC_MEMFILE_MAX": "20"}).server_max_body_size == 1024 * 1024


@pytest.mark.parametrize(
    ("environ", "message"),
    [
        pytest.param({"SERVER_PORT": "abc"}, "SERVER_PORT='abc' is invalid: expected an integer from 1 to 65535", id="port-text"),
        pytest.param({"SERVER_PORT": "70000"}, "SERVER_PORT='70000' is invalid: expected an integer from 1 to 65535", id="port-range"),
        pytest.param({"FUNC_PORT": "-1"}, "FUNC_PORT='-1' is invalid: expected an integer from 1 to 65535", id="alias-named"),
        pytest.param({"SERVER_CALL_TIMEOUT": "-1"}, "SERVER_CALL_TIMEOUT='-1' is invalid: expected a non-negative number of seconds up to 1000000", id="timeout-negative"),
        pytest.param({"SERVER_CALL_TIMEOUT": "nan"}, "SERVER_CALL_TIMEOUT='nan' is invalid", id="timeout-nan"),
        pytest.param({"SERVER_NUMTHREADS": "0"}, "SERVER_NUMTHREADS='0' is invalid: expected a positive integer", id="threads-zero"),
        pytest.param({"FUNC_LABELS": "{not json"}, "FUNC_LABELS='{not json' is invalid: expected a JSON object or k=v,k2=v2", id="labels-json"),
        pytest.param({"FUNC_LABELS": "novalue"}, "FUNC_LABELS='novalue' is invalid", id="labels-kv"),
        pytest.param({"FUNC_ANNOTATIONS": "[1, 2]"}, "FUNC_ANNOTATIONS='[1, 2]' is invalid", id="annotations-list"),
        pytest.param({"FUNC_BODY_MB_LIMIT": "lots"}, "FUNC_BODY_MB_LIMIT='lots' is invalid: expected a non-negative number of megabytes", id="mb"),
        pytest.param({"SERVER_RELOAD": "maybe"}, "SERVER_RELOAD='maybe' is invalid: expected true or false", id="bool"),
        pytest.param({"SERVER_LOG_LEVEL": "loud"}, "SERVER_LOG_LEVEL='loud' is invalid", id="level"),
        pytest.param({"HANDLER_SIGNATURE": "whatever"}, "HANDLER_SIGNATURE='whatever' is invalid", id="signature"),
        pytest.param({"HANDLER_FUNCTION_NAME": "not-a-name"}, "HANDLER_FUNCTION_NAME='not-a-name' is invalid", id="function-name"),
        pytest.param({"HANDLER_MODULE_NAME": ""}, "HANDLER_MODULE_NAME='' is invalid", id="module-name"),
        pytest.param({"TRACE_COLLECTOR_ENDPOINT": "collector:4318"}, "TRACE_COLLECTOR_ENDPOINT='collector:4318' is invalid: expected an http:// or https:// URL", id="trace-endpoint"),
        pytest.param({"PUBLISHER_PROXY_ADDRESS": "/publish"}, "PUBLISHER_PROXY_ADDRESS='/publish' is invalid: expected an http:// or https:// URL", id="publisher"),
        pytest.param({"SERVER_METRICS_PATH": "metrics"}, "SERVER_METRICS_PATH='metrics' is invalid: expected a path starting with /", id="metrics-path"),
        pytest.param({"PUBLISHER_PROXY_TIMEOUT": "0"}, "PUBLISHER_PROXY_TIMEOUT='0' is invalid: expected a positive number of seconds", id="publish-timeout"),
        # Values whose parsing fails with another error than ValueError, or that the servers would overflow on.
        pytest.param({"FUNC_BODY_MB_LIMIT": "1e303"}, "FUNC_BODY_MB_LIMIT='1e303' is invalid: expected a non-negative number of megabytes", id="mb-overflow"),
        pytest.param({"FUNC_LABELS": "[" * 60_000 + "]" * 60_000}, "FUNC_LABELS='[[[[", id="labels-nested-past-the-recursion-limit"),
        pytest.param({"SERVER_KEEPALIVE_TIMEOUT": "1e10"}, "SERVER_KEEPALIVE_TIMEOUT='1e10' is invalid: expected a positive number of seconds up to 1000000", id="keepalive-too-long"),
        pytest.param({"SERVER_GRACEFUL_TIMEOUT": "1000000.5"}, "SERVER_GRACEFUL_TIMEOUT='1000000.5' is invalid: expected a non-negative number of seconds up to 1000000", id="graceful-too-long"),
        pytest.param({"FUNC_TIMEOUT": "1e300"}, "FUNC_TIMEOUT='1e300' is invalid: expected a non-negative number of seconds up to 1000000", id="alias-too-long"),
        pytest.param({"HANDLER_FOLDER": ""}, "HANDLER_FOLDER='' is invalid: expected a folder path", id="folder-empty"),
        pytest.param({"HANDLER_PATH": ""}, "HANDLER_PATH='' is invalid: expected a folder path", id="folder-alias-empty"),
        pytest.param({"TRACE_COLLECTOR_ENDPOINT": "http://[::1"}, "TRACE_COLLECTOR_ENDPOINT='http://[::1' is invalid: expected an http:// or https:// URL", id="trace-endpoint-bracket"),
        pytest.param({"TRACE_COLLECTOR_ENDPOINT": "http://127.0.0.1:abc/v1/traces"}, "TRACE_COLLECTOR_ENDPOINT='http://127.0.0.1:abc/v1/traces' is invalid", id="trace-endpoint-port-text"),
        pytest.param({"TRACE_COLLECTOR_ENDPOINT": "http://127.0.0.1:99999/v1/traces"}, "TRACE_COLLECTOR_ENDPOINT='http://127.0.0.1:99999/v1/traces' is invalid", id="trace-endpoint-port-range"),
        pytest.param({"TRACE_COLLECTOR_ENDPOINT": " http://collector:4318"}, "TRACE_COLLECTOR_ENDPOINT=' http://collector:4318' is invalid", id="trace-endpoint-blank"),
        pytest.param({"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://a b/v1/metrics"}, "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT='http://a b/v1/metrics' is invalid", id="metrics-endpoint-blank"),
        pytest.param({"PUBLISHER_PROXY_ADDRESS": "http://:8080/publish"}, "PUBLISHER_PROXY_ADDRESS='http://:8080/publish' is invalid", id="publisher-no-host"),
        # A check between settings names the variables as the user set them, aliases included.
        pytest.param({"MOD_NAME": "bad-name"}, "MOD_NAME='bad-name' is invalid: expected a Python module name", id="module-alias-named"),
        pytest.param({"FUNCTION_TARGET": "my-func"}, "FUNCTION_TARGET='my-func' is invalid: expected a Python identifier", id="function-alias-named"),
        pytest.param({"FUNC_HANDLER": "1.5"}, "FUNC_HANDLER='1.5' is invalid: expected a function name or module.function", id="handler-string-named-whole"),
        pytest.param({"FUNC_TIMEOUT": "2", "SERVER_QUEUE_TARGET": "5"}, "SERVER_QUEUE_TARGET=5 is invalid: expected at most FUNC_TIMEOUT (2)", id="queue-target-alias"),
        pytest.param({"PORT": "9000", "SERVER_METRICS_PORT": "9000"}, "SERVER_METRICS_PORT=9000 is refused: it is PORT;", id="metrics-port-alias"),
    ],
)
def test_bad_values_name_the_variable_the_value_and_what_was_expected(environ, message):
    with pytest.raises(ConfigError) as caught:
        Config.from_env(environ)
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)
    assert len(str(caught.value)) < 600  # one readable line, however long the value


def test_durations_up_to_the_bound_are_taken():
    config = Config.from_env({"SERVER_CALL_TIMEOUT": "1000000", "SERVER_KEEPALIVE_TIMEOUT": "999999.5"})
    assert (config.server_call_timeout, config.server_keepalive_timeout) == (1_000_000, 999_999.5)


def test_the_variable_a_setting_came_from():
    config = Config.from_env({"FUNC_PORT": "9000", "SERVER_HOST": "127.0.0.1"}, server_workers=2)
    assert config.env_name("server_port") == "FUNC_PORT"
    assert config.env_name("server_host") == "SERVER_HOST"
    assert config.env_name("server_workers") == "SERVER_WORKERS"  # an override names the setting itself
    assert config.env_name("server_call_timeout") == "SERVER_CALL_TIMEOUT"  # left at its default


def test_overrides_win_and_unknown_overrides_are_refused():
    assert Config.from_env({"SERVER_PORT": "1"}, server_port=2).server_port == 2
    with pytest.raises(ConfigError, match="unknown setting"):
        Config.from_env({}, server_prot=2)


def test_known_env_names_include_aliases():
    names = known_env_names()
    assert {"SERVER_PORT", "FUNC_PORT", "HANDLER_PATH", "KUBELESS_INSTALL_VOLUME"} <= names


# -- compatibility: handler strings and default sources ------------------------


@pytest.mark.parametrize(
    ("environ", "module", "function"),
    [
        pytest.param({"FUNC_HANDLER": "foo.foo"}, "foo", "foo", id="kubeless-custom-runtime"),
        pytest.param({"FUNC_HANDLER": "orders.create", "MOD_NAME": "orders"}, "orders", "create", id="agrees-with-module"),
        pytest.param({"HANDLER_FUNCTION_NAME": "pkg.mod.run"}, "pkg.mod", "run", id="dotted-module"),
        pytest.param({"FUNCTION_TARGET": "hello_http"}, "handler", "hello_http", id="functions-framework-target"),
        pytest.param({"HANDLER_FUNCTION_NAME": "main", "FUNC_HANDLER": "foo.bar"}, "handler", "main", id="reference-name-wins"),
    ],
)
def test_handler_strings(environ, module, function):
    config = Config.from_env(environ)
    assert (config.handler_module_name, config.handler_function_name) == (module, function)


@pytest.mark.parametrize(
    ("environ", "message"),
    [
        pytest.param(
            {"FUNC_HANDLER": "foo.bar", "MOD_NAME": "other"},
            "FUNC_HANDLER='foo.bar' names module 'foo' but MOD_NAME='other'; set the module in one of them only",
            id="contradicts-module",
        ),
        pytest.param({"FUNC_HANDLER": "foo."}, "FUNC_HANDLER='foo.' is invalid: expected a function name or module.function", id="no-function"),
        pytest.param({"FUNC_HANDLER": ".foo"}, "FUNC_HANDLER='.foo' is invalid", id="no-module"),
    ],
)
def test_bad_handler_strings(environ, message):
    with pytest.raises(ConfigError) as caught:
        Config.from_env(environ)
    assert str(caught.value).startswith(message)


def test_port_alias_of_the_functions_framework():
    assert Config.from_env({"PORT": "9090"}).server_port == 9090
    assert Config.from_env({"PORT": "9090", "FUNC_PORT": "9091"}).server_port == 9091


# -- the Kafka event trigger ---------------------------------------------------


def test_kafka_settings_are_parsed():
    config = Config.from_env(
        {
            "SERVER_ADAPTER": "kafka",
            "KAFKA_BROKERS": " kafka-0:9092, kafka-1:9093 ,",
            "KAFKA_TOPICS": "orders,payments",
            "KAFKA_RETRIES": "0",
            "KAFKA_RETRY_BACKOFF": "0.5",
            "KAFKA_SECURITY_PROTOCOL": "SASL_SSL",
            "KAFKA_CLIENT_CONFIG": "session.timeout.ms=6000",
        }
    )
    assert config.kafka_brokers == ("kafka-0:9092", "kafka-1:9093")
    assert config.kafka_topics == ("orders", "payments")
    assert config.kafka_retries == 0
    assert config.kafka_retry_backoff == 0.5
    assert config.kafka_security_protocol == "sasl_ssl"
    assert config.kafka_client_config == {"session.timeout.ms": "6000"}
    assert config.kafka_dead_letter_topic is None and config.kafka_reply_topic is None


@pytest.mark.parametrize(
    ("environ", "group"),
    [
        pytest.param({}, "funcwsgi", id="default"),
        pytest.param({"FUNC_NAME": "orders-fn"}, "orders-fn", id="the function's name"),
        pytest.param({"FUNC_NAME": "orders-fn", "KAFKA_GROUP_ID": "g"}, "g", id="set"),
    ],
)
def test_the_consumer_group_defaults_to_the_function_name(environ, group):
    assert Config.from_env(environ).kafka_group == group


@pytest.mark.parametrize(
    ("environ", "message"),
    [
        pytest.param({"KAFKA_BROKERS": "kafka"}, "KAFKA_BROKERS='kafka' is invalid: expected a comma-separated list of host:port", id="no port"),
        pytest.param({"KAFKA_BROKERS": "kafka:99999"}, "KAFKA_BROKERS='kafka:99999' is invalid", id="port out of range"),
        pytest.param({"KAFKA_RETRIES": "-1"}, "KAFKA_RETRIES='-1' is invalid: expected a non-negative integer", id="negative retries"),
        pytest.param({"KAFKA_SECURITY_PROTOCOL": "tls"}, "KAFKA_SECURITY_PROTOCOL='tls' is invalid: expected one of plaintext", id="protocol"),
        pytest.param(
            {"KAFKA_RETRY_BACKOFF": "5", "KAFKA_RETRY_BACKOFF_MAX": "1"},
            "KAFKA_RETRY_BACKOFF_MAX=1 is invalid: expected at least KAFKA_RETRY_BACKOFF (5)",
            id="max below first backoff",
        ),
        pytest.param({"SERVER_ADAPTER": "kafka", "KAFKA_TOPICS": "t"}, "KAFKA_BROKERS is not set", id="kafka without brokers"),
        pytest.param({"SERVER_ADAPTER": "kafka", "KAFKA_BROKERS": "k:9092"}, "KAFKA_TOPICS is not set", id="kafka without topics"),
    ],
)
def test_bad_kafka_settings_are_refused(environ, message):
    with pytest.raises(ConfigError) as caught:
        Config.from_env(environ)
    assert message in str(caught.value)


# -- reading does no I/O -----------------------------------------------------------------


_EVERY_PLATFORM_SIGNAL = {
    # Unset folder and module (the case that used to search '/', '/kubeless', '/function'),
    # a Kubeless handler string, Fission's volume (its port is a default of the mapping),
    # and settings of every kind.
    "FUNC_HANDLER": "handler.main",
    "USERFUNCVOL": "/userfunc",
    "SERVER_METRICS": "true",
    "SERVER_CALL_TIMEOUT": "5",
    "SERVER_CORS_ORIGINS": "https://a.example",
    "FUNC_LABELS": '{"team": "a"}',
    # Propagators beyond the default (their entry points are looked up at start-up), a host name
    # where an address is expected, and the settings that name files, folders and ports.
    "OTEL_PROPAGATORS": "tracecontext,b3,jaeger",
    "SERVER_HOST": "::1",
    "LISTEN_ADDRESS": "127.0.0.1:9000",
    "HANDLER_SECRETS_PATH": "/run/secrets:/nonexistent",
    "SERVER_DEBUG_PORT": "5679",
    "TRACE_COLLECTOR_ENDPOINT": "http://collector.invalid:4318/v1/traces",
    "KAFKA_SSL_CA_LOCATION": "/nonexistent/ca.pem",
}


@pytest.mark.parametrize("environ", [{}, _EVERY_PLATFORM_SIGNAL], ids=["nothing-set", "many-set"])
def test_reading_the_environment_does_no_io(environ, monkeypatch):
    """Parsing reads the mapping only; the function's files and the installed propagators are looked for at start-up (funcwsgi.compat.resolve)."""
    touched: list[tuple[str, object]] = []

    def noting(name, real):
        def call(*args, **kwargs):
            touched.append((name, args or kwargs))
            return real(*args, **kwargs)

        return call

    for name in ("stat", "lstat", "listdir", "scandir", "open"):
        monkeypatch.setattr(os, name, noting(f"os.{name}", getattr(os, name)))
    monkeypatch.setattr("builtins.open", noting("open", open))
    monkeypatch.setattr(importlib.metadata, "entry_points", noting("importlib.metadata.entry_points", importlib.metadata.entry_points))
    monkeypatch.setattr(socket, "getaddrinfo", noting("socket.getaddrinfo", socket.getaddrinfo))
    config = Config.from_env(environ)
    monkeypatch.undo()
    assert touched == []
    assert config.handler_folder == "/"  # the declared default: nothing was looked up


def test_the_configuration_holds_no_code_that_could_do_io():
    """What resolves host names or reads the environment itself (gunicorn's --bind) is the gunicorn adapter's."""
    package = Path(funcwsgi.config.__file__).parent
    imported = {
        alias.name
        for path in package.glob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Import)
        for alias in node.names
    }
    assert imported.isdisjoint({"socket", "subprocess", "urllib.request", "http.client"}), imported
