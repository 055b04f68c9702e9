"""The trigger's own Prometheus series, next to the call metrics on ``/metrics``.

Read at scrape time from :class:`~funcwsgi.kafka.consumer.TriggerStatus`, so
consuming a record costs no metrics work beyond a counter increment.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .consumer import TriggerStatus


class TriggerCollector:
    """``kafka_consumer_lag``, ``kafka_dead_lettered_records_total`` and friends."""

    def __init__(self, status: TriggerStatus) -> None:
        self.status = status

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        status = self.status
        lag = GaugeMetricFamily(
            "kafka_consumer_lag", "Records in the partition not yet committed by this consumer group.", labels=["topic", "partition"]
        )
        for (topic, partition), value in sorted(status.lag.items()):
            lag.add_metric([topic, str(partition)], value)
        yield lag
        for name, documentation, counter in (
            ("kafka_processed_records", "Records done: the function succeeded or the record was dead-lettered.", status.processed),
            ("kafka_dead_lettered_records", "Records sent to the dead-letter topic after their retries.", status.dead_lettered),
            ("kafka_retried_records", "Retries of failed records.", status.retried),
        ):
            family = CounterMetricFamily(name, documentation, labels=["topic"])
            for topic in sorted(counter):
                family.add_metric([topic], counter[topic])
            yield family
        yield GaugeMetricFamily("kafka_brokers_connected", "1 while a broker connection is up, else 0.", value=1 if status.connected else 0)


def register_trigger_metrics(status: TriggerStatus) -> None:
    from ..metrics.endpoint import register_collector

    register_collector(TriggerCollector(status))
