from __future__ import annotations

from prometheus_client import CollectorRegistry, generate_latest

from funcwsgi.kafka.consumer import TriggerStatus
from funcwsgi.kafka.trigger_metrics import TriggerCollector


def exposition(status: TriggerStatus) -> list[str]:
    registry = CollectorRegistry()
    registry.register(TriggerCollector(status))  # type: ignore[arg-type]
    return generate_latest(registry).decode().splitlines()


def test_every_topic_starts_at_zero():
    lines = exposition(TriggerStatus("k:9092", ("orders", "payments")))
    assert 'kafka_dead_lettered_records_total{topic="orders"} 0.0' in lines
    assert 'kafka_retried_records_total{topic="payments"} 0.0' in lines
    assert 'kafka_processed_records_total{topic="orders"} 0.0' in lines
    assert "kafka_brokers_connected 0.0" in lines
    assert not any(line.startswith("kafka_consumer_lag{") for line in lines)


def test_counts_lag_and_connectivity_are_read_at_scrape_time():
    status = TriggerStatus("k:9092", ("orders",))
    status.count(status.dead_lettered, "orders")
    status.count(status.retried, "orders")
    status.count(status.retried, "orders")
    status.lag = {("orders", 0): 5, ("orders", 3): 0}
    status.connected = True
    lines = exposition(status)
    assert 'kafka_dead_lettered_records_total{topic="orders"} 1.0' in lines
    assert 'kafka_retried_records_total{topic="orders"} 2.0' in lines
    assert 'kafka_consumer_lag{partition="0",topic="orders"} 5.0' in lines
    assert 'kafka_consumer_lag{partition="3",topic="orders"} 0.0' in lines
    assert "kafka_brokers_connected 1.0" in lines
