"""The kafka adapter: start-up errors, and what it serves over HTTP.

Delivery itself (commits, retries, dead letters, rebalances, SIGTERM) is in
tests/kafka/test_consumer.py.
"""

from __future__ import annotations

import sys

import pytest

from tests.kafka.broker import trigger_env
from tests.support.paths import FUNCTIONS
from tests.support.processes import SERVE, run_to_exit


def test_a_missing_extra_is_one_line_and_exit_2(tmp_path):
    command = [sys.executable, "-c", "import sys; sys.modules['confluent_kafka'] = None; " + 'from funcwsgi.cli import main; sys.exit(main(["serve"]))']
    result = run_to_exit(command, trigger_env("127.0.0.1:9", "t", "g", tmp_path / "calls.log"))
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "funcwsgi: error: SERVER_ADAPTER='kafka' needs the confluent_kafka server, which is not installed: pip install 'funcwsgi[kafka]'"
    ]
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        pytest.param({"KAFKA_BROKERS": ""}, "KAFKA_BROKERS is not set", id="no brokers"),
        pytest.param({"KAFKA_TOPICS": ""}, "KAFKA_TOPICS is not set", id="no topics"),
        pytest.param({"KAFKA_BROKERS": "localhost"}, "KAFKA_BROKERS='localhost' is invalid: expected a comma-separated list of host:port", id="no port"),
        pytest.param({"KAFKA_CLIENT_CONFIG": "no.such.property=1"}, "the Kafka client refused its configuration", id="bad client property"),
    ],
)
def test_bad_kafka_settings_stop_start_up(tmp_path, settings, message):
    env = trigger_env("127.0.0.1:9", "t", "g", tmp_path / "calls.log")
    env.update(settings)
    result = run_to_exit(SERVE, env)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_a_failing_start_hook_stops_start_up_with_one_line(tmp_path):
    env = trigger_env("127.0.0.1:9", "t", "g", tmp_path / "calls.log")
    (tmp_path / "fail-start").touch()
    env.update(HANDLER_FOLDER=str(FUNCTIONS / "serving"), HEALTH_DIR=str(tmp_path))
    result = run_to_exit(SERVE, env)
    assert result.returncode == 2
    errors = [line for line in result.stderr.splitlines() if line.startswith("funcwsgi: error:")]
    assert len(errors) == 1 and errors[0].endswith("raised RuntimeError: cannot reach the database"), result.stderr
