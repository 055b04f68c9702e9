"""The confluent-kafka client: imported only here, configured from the settings."""

from __future__ import annotations

import logging
from collections.abc import Callable
from types import ModuleType
from typing import Any

from ..config import Config
from ..errors import StartupError

log = logging.getLogger("funcwsgi.kafka")

EXTRA = "funcwsgi[kafka]"

#: How often the client reports broker states and offsets (readiness, lag).
STATS_INTERVAL_MS = 1000
#: A reply or dead letter not delivered by then is failed and retried; bounded so
#: that a vanished broker can never hold a record forever without a log line.
DELIVERY_TIMEOUT_MS = 30000

SESSION_TIMEOUT_MS = 10000

_SECURITY = {
    "kafka_security_protocol": "security.protocol",
    "kafka_sasl_mechanism": "sasl.mechanism",
    "kafka_sasl_username": "sasl.username",
    "kafka_sasl_password": "sasl.password",
    "kafka_ssl_ca_location": "ssl.ca.location",
    "kafka_ssl_certificate_location": "ssl.certificate.location",
    "kafka_ssl_key_location": "ssl.key.location",
}


def import_client() -> ModuleType:
    """``confluent_kafka``, or a start-up error naming the extra to install."""
    try:
        import confluent_kafka
    except ImportError:
        raise StartupError(f"SERVER_ADAPTER=kafka needs confluent-kafka: pip install '{EXTRA}'") from None
    return confluent_kafka


class ConnectionNoise(logging.Filter):
    """Drops the client's own line per failed connection attempt.

    The trigger logs one clear line when the brokers become unreachable and one
    when they are back; the client would add one per reconnect attempt.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("FAIL ")


client_log = logging.getLogger("funcwsgi.kafka.client")
client_log.addFilter(ConnectionNoise())


def common_config(config: Config) -> dict[str, Any]:
    settings: dict[str, Any] = {
        "bootstrap.servers": ",".join(config.kafka_brokers),
        "client.id": config.func_name or "funcwsgi",
        "logger": client_log,
    }
    for name, key in _SECURITY.items():
        value = getattr(config, name)
        if value is not None:
            settings[key] = value
    return settings


def consumer_config(config: Config, on_error: Callable[[Any], None], on_stats: Callable[[str], None]) -> dict[str, Any]:
    settings = common_config(config)
    settings.update(
        {
            "group.id": config.kafka_group,
            # Offsets are committed by the trigger, one by one, after the function succeeded.
            "enable.auto.commit": False,
            # A new group starts at the oldest record: nothing published before it is skipped.
            "auto.offset.reset": "earliest",
            # A replica that died without leaving the group frees its partitions after this
            # long (Kafka's default before 3.0; 45 s since). Also bounds the group joins of
            # brokers that hold a join for the session timeout.
            "session.timeout.ms": SESSION_TIMEOUT_MS,
            "statistics.interval.ms": STATS_INTERVAL_MS,
            "error_cb": on_error,
            "stats_cb": on_stats,
        }
    )
    settings.update(config.kafka_client_config)
    return settings


def producer_config(config: Config, on_error: Callable[[Any], None]) -> dict[str, Any]:
    settings = common_config(config)
    settings.update({"acks": "all", "message.timeout.ms": DELIVERY_TIMEOUT_MS, "error_cb": on_error})
    # Only the producer's own properties: librdkafka warns about consumer ones.
    settings.update({key: value for key, value in config.kafka_client_config.items() if not _consumer_only(key)})
    return settings


def _consumer_only(key: str) -> bool:
    return key.startswith(("group.", "session.", "heartbeat.", "auto.", "enable.auto", "fetch.", "max.poll", "partition.assignment"))


def make_clients(config: Config, on_error: Callable[[Any], None], on_stats: Callable[[str], None]) -> tuple[Any, Any | None]:
    """(consumer, producer or None): a producer only when replies or dead letters are produced."""
    kafka = import_client()
    try:
        consumer = kafka.Consumer(consumer_config(config, on_error, on_stats))
        producer = None
        if config.kafka_reply_topic or config.kafka_dead_letter_topic:
            producer = kafka.Producer(producer_config(config, on_error))
    except kafka.KafkaException as error:
        raise StartupError(f"the Kafka client refused its configuration (KAFKA_* settings): {error.args[0].str()}") from None
    return consumer, producer
