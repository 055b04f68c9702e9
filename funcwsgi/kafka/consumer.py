"""The consumer loop: at-least-once delivery of records to the function.

Threads and who owns what:

- the main thread owns the consumer: it polls, commits, pauses and resumes
  partitions, and runs the rebalance callbacks (they run inside ``poll``).
  The client serialises its calls, so a commit from another thread would wait
  behind ``poll``;
- ``SERVER_NUMTHREADS`` worker threads each serve one partition at a time,
  record after record in offset order, and hand each record that is done
  (the function succeeded, or the record was dead-lettered) back to the main
  thread, which commits the next offset.

So order is kept within a partition, partitions run in parallel, and an offset
is never committed past a record that has not been dealt with.
"""

from __future__ import annotations

import json
import logging
import queue
import threading
import time
from collections import Counter, deque
from typing import TYPE_CHECKING, Any

from ..config import Config
from .client import make_clients
from .dispatch import Outcome, dispatch
from .records import Record, base_environ, dead_letter_record, record_environ, reply_record

if TYPE_CHECKING:
    from _typeshed.wsgi import WSGIApplication

    from .records import OutgoingRecord

log = logging.getLogger("funcwsgi.kafka")

#: A partition with this many records waiting is paused until they are served,
#: so a partition stuck in retries cannot fill the memory.
PAUSE_AT = 1000
POLL_SECONDS = 0.2
#: While records are in flight the loop polls this often, so that finished
#: records are committed promptly (a poll cannot be woken up early).
BUSY_POLL_SECONDS = 0.005

COMMIT_RETRY_SECONDS = 1.0

DONE = "done"
ABORTED = "aborted"


class PartitionWork:
    """One assigned partition: the records waiting, and whether a worker serves it."""

    __slots__ = ("topic", "partition", "waiting", "busy", "paused", "cancel", "committed", "first_offset")

    def __init__(self, topic: str, partition: int) -> None:
        self.topic = topic
        self.partition = partition
        self.waiting: deque[Record] = deque()
        self.busy = False
        self.paused = False
        #: Set when the partition is revoked or the trigger stops: no new record
        #: starts, and a retry waiting for its backoff gives up (uncommitted).
        self.cancel = threading.Event()
        self.committed = -1  # the last offset this consumer committed (main thread only)
        self.first_offset = -1  # the first record this consumer received


class TriggerStatus:
    """What the probes and ``/metrics`` read: connectivity, lag, counters."""

    def __init__(self, brokers: str, topics: tuple[str, ...] = ()) -> None:
        self.brokers = brokers
        self.connected: bool | None = None  # None until the first sign either way
        self.running = False
        self.lag: dict[tuple[str, int], int] = {}
        # Every topic's series exists from the start, at 0, so rates work from the first scrape.
        self.dead_lettered: Counter[str] = Counter(dict.fromkeys(topics, 0))
        self.retried: Counter[str] = Counter(dict.fromkeys(topics, 0))
        self.processed: Counter[str] = Counter(dict.fromkeys(topics, 0))
        self._lock = threading.Lock()

    def set_connected(self, connected: bool, reason: str = "") -> None:
        with self._lock:
            changed = connected != self.connected
            self.connected = connected
        if changed and connected:
            log.info("Connected to the Kafka brokers %s", self.brokers)
        elif changed:
            log.error("Kafka brokers %s unreachable: %s; reconnecting with backoff, not ready meanwhile", self.brokers, reason)

    def count(self, counter: Counter[str], topic: str) -> None:
        with self._lock:
            counter[topic] += 1


class KafkaTrigger:
    """Consumes ``KAFKA_TOPICS`` as ``KAFKA_GROUP_ID`` and serves each record with ``app``."""

    def __init__(self, app: WSGIApplication, config: Config) -> None:
        self.app = app
        self.config = config
        self.base = base_environ(config.server_port)
        self.status = TriggerStatus(",".join(config.kafka_brokers), config.kafka_topics)
        self.consumer, self.producer = make_clients(config, self._on_error, self._on_stats)
        from confluent_kafka import KafkaError, KafkaException, TopicPartition

        self._KafkaError = KafkaError
        self._KafkaException = KafkaException
        self._TopicPartition = TopicPartition
        self.partitions: dict[tuple[str, int], PartitionWork] = {}
        self.lock = threading.Lock()
        self.idle = threading.Condition(self.lock)  # notified when a worker lets a partition go
        self.stopping = threading.Event()
        self.ready_partitions: queue.SimpleQueue[PartitionWork | None] = queue.SimpleQueue()
        self.finished: queue.SimpleQueue[Record] = queue.SimpleQueue()
        self.uncommitted: dict[tuple[str, int], int] = {}  # next offset to commit, per partition
        self.in_flight = 0  # partitions a worker is serving
        self._commit_retry_at = 0.0
        self.workers = [
            threading.Thread(target=self._work, name=f"kafka-call-{number}", daemon=True)
            for number in range(config.server_numthreads)
        ]
        self._warned_forever = False

    # -- the main thread ----------------------------------------------------------

    def stop(self) -> None:
        """Ask :meth:`run` to finish the records in flight and return (signal-safe)."""
        self.stopping.set()

    def run(self) -> int:
        """Consume until :meth:`stop`; then finish in-flight records, commit, leave the group."""
        for worker in self.workers:
            worker.start()
        topics = list(self.config.kafka_topics)
        self.consumer.subscribe(topics, on_assign=self._assigned, on_revoke=self._revoked, on_lost=self._lost)
        self.status.running = True
        log.info(
            "Consuming %s as group %r from %s with up to %d partitions at once",
            ", ".join(topics), self.config.kafka_group, self.status.brokers, len(self.workers),
        )
        try:
            while not self.stopping.is_set():
                message = self.consumer.poll(BUSY_POLL_SECONDS if self.in_flight or self.uncommitted else POLL_SECONDS)
                if message is not None:
                    self._accept(message)
                self._commit_finished()
                self._resume_drained()
        finally:
            self._shutdown()
        return 0

    def _accept(self, message: Any) -> None:
        error = message.error()
        if error is not None:
            self._on_error(error)
            return
        kind, stamp = message.timestamp()
        record = Record(
            topic=message.topic(),
            partition=message.partition(),
            offset=message.offset(),
            value=message.value(),
            key=message.key(),
            headers=list(message.headers() or ()),
            timestamp_ms=stamp if kind else None,
        )
        with self.lock:
            work = self.partitions.get((record.topic, record.partition))
            if work is None or work.cancel.is_set():
                return  # revoked since it was fetched: the new owner gets it
            work.waiting.append(record)
            if work.first_offset < 0:
                work.first_offset = record.offset
            start = not work.busy
            if start:
                work.busy = True
                self.in_flight += 1
            pause = len(work.waiting) >= PAUSE_AT and not work.paused
            if pause:
                work.paused = True
        if start:
            self.ready_partitions.put(work)
        if pause:
            self.consumer.pause([self._TopicPartition(work.topic, work.partition)])

    def _resume_drained(self) -> None:
        with self.lock:
            drained = [work for work in self.partitions.values() if work.paused and not work.waiting]
            for work in drained:
                work.paused = False
        if drained:
            self.consumer.resume([self._TopicPartition(work.topic, work.partition) for work in drained])

    def _assigned(self, consumer: Any, partitions: list[Any]) -> None:
        with self.lock:
            for item in partitions:
                self.partitions[(item.topic, item.partition)] = PartitionWork(item.topic, item.partition)
        log.info("Assigned %s", _names(partitions) or "no partitions")

    def _revoked(self, consumer: Any, partitions: list[Any]) -> None:
        self._release([(item.topic, item.partition) for item in partitions], wait=True)
        log.info("Revoked %s", _names(partitions) or "no partitions")

    def _lost(self, consumer: Any, partitions: list[Any]) -> None:
        # Another member owns them already: commits would fail, so do not wait for them.
        self._release([(item.topic, item.partition) for item in partitions], wait=False)
        log.warning("Lost %s: records in flight on them will be delivered again", _names(partitions))

    def _release(self, keys: list[tuple[str, int]], *, wait: bool) -> None:
        """Stop serving these partitions; with ``wait``, let their records in flight finish and commit them."""
        with self.lock:
            released = [self.partitions[key] for key in keys if key in self.partitions]
            for work in released:
                work.cancel.set()
            if wait:
                self._wait_idle(released)
        if wait:
            self._commit_finished()
        with self.lock:
            for key in keys:
                self.partitions.pop(key, None)
                self.uncommitted.pop(key, None)
                self.status.lag.pop(key, None)

    def _wait_idle(self, works: list[PartitionWork]) -> bool:
        """Wait (holding ``self.lock``) until no worker serves ``works``; False after the graceful timeout."""
        deadline = time.monotonic() + self.config.server_graceful_timeout
        while any(work.busy for work in works):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            self.idle.wait(remaining)
        return True

    def _shutdown(self) -> None:
        with self.lock:
            works = list(self.partitions.values())
            for work in works:
                work.cancel.set()
            in_flight = sum(work.busy for work in works)
            if in_flight:
                log.info("Stopping: finishing %d record(s) in flight", in_flight)
            finished = self._wait_idle(works)
        self._commit_finished()
        if not finished:
            log.warning(
                "Records still in flight after SERVER_GRACEFUL_TIMEOUT=%gs: they are not committed and will be delivered again",
                self.config.server_graceful_timeout,
            )
        for _ in self.workers:
            self.ready_partitions.put(None)
        self.status.running = False
        try:
            self.consumer.close()  # commits nothing more; leaves the group so the partitions move at once
        except self._KafkaException as error:
            log.warning("Closing the Kafka consumer failed: %s", error)
        if self.producer is not None:
            self.producer.flush(5)
        log.info("Stopped consuming; left group %r", self.config.kafka_group)

    def _commit_finished(self) -> None:
        """Commit, in one request, the offset after the last finished record of each partition."""
        while True:
            try:
                record = self.finished.get_nowait()
            except queue.Empty:
                break
            key = (record.topic, record.partition)
            if key in self.partitions:  # one released without waiting is someone else's now
                self.uncommitted[key] = max(record.offset + 1, self.uncommitted.get(key, 0))
                self.status.count(self.status.processed, record.topic)
        if not self.uncommitted or time.monotonic() < self._commit_retry_at:
            return
        offsets = [self._TopicPartition(topic, number, offset) for (topic, number), offset in self.uncommitted.items()]
        try:
            results = self.consumer.commit(offsets=offsets, asynchronous=False)
        except self._KafkaException as error:
            self._commit_failed(offsets, error.args[0].str())
            return
        for item in results or offsets:
            key = (item.topic, item.partition)
            if item.error is not None:
                self._commit_failed([item], item.error.str())
            else:
                work = self.partitions.get(key)
                if work is not None:
                    work.committed = item.offset
                if self.uncommitted.get(key) == item.offset:
                    del self.uncommitted[key]

    def _commit_failed(self, offsets: list[Any], reason: str) -> None:
        log.warning("Committing %s failed: %s; retrying in %gs", _names(offsets), reason, COMMIT_RETRY_SECONDS)
        self._commit_retry_at = time.monotonic() + COMMIT_RETRY_SECONDS

    # -- client callbacks (served by poll, on the main thread) ----------------------

    def _on_error(self, error: Any) -> None:
        code = error.code()
        if code == self._KafkaError._ALL_BROKERS_DOWN:
            self.status.set_connected(False, error.str())
        elif code in (self._KafkaError._TRANSPORT, self._KafkaError._RESOLVE):
            if self.status.connected is None:
                self.status.set_connected(False, error.str())
            elif self.status.connected:
                log.warning("Kafka: %s", error.str())
        elif error.fatal():
            log.critical("Kafka client failed for good: %s; restart the function", error.str())
            self.status.running = False
        else:
            log.warning("Kafka: %s", error.str())

    def _on_stats(self, text: str) -> None:
        stats = json.loads(text)
        brokers = stats.get("brokers", {}).values()
        if any(broker.get("state") == "UP" for broker in brokers):
            self.status.set_connected(True)
        elif self.status.connected:
            self.status.set_connected(False, "no broker connection is up")
        lag: dict[tuple[str, int], int] = {}
        for topic, topic_stats in stats.get("topics", {}).items():
            for number, partition_stats in topic_stats.get("partitions", {}).items():
                key = (topic, int(number))
                work = self.partitions.get(key)
                end = partition_stats.get("hi_offset", -1)
                if work is None or end < 0:
                    continue
                # Where the group stands: what this consumer committed, else what the group had
                # committed before, else where this consumer began reading.
                done = work.committed
                if done < 0:
                    done = partition_stats.get("committed_offset", -1)
                if done < 0:
                    done = work.first_offset
                if done >= 0:
                    lag[key] = max(0, end - done)
        self.status.lag = lag

    # -- worker threads ----------------------------------------------------------

    def _work(self) -> None:
        while True:
            work = self.ready_partitions.get()
            if work is None:
                return
            self._drain(work)

    def _drain(self, work: PartitionWork) -> None:
        """Serve the partition's waiting records in order, committing each one."""
        while True:
            with self.lock:
                if work.cancel.is_set() or not work.waiting:
                    self._let_go(work)
                    return
                record = work.waiting.popleft()
            if self._process(record, work) is ABORTED:
                with self.lock:
                    self._let_go(work)
                return
            self.finished.put(record)

    def _let_go(self, work: PartitionWork) -> None:
        """(Holding ``self.lock``) no worker serves ``work`` any more."""
        work.busy = False
        self.in_flight -= 1
        self.idle.notify_all()

    def _process(self, record: Record, work: PartitionWork) -> str:
        """Call the function until it succeeds or the record is dead-lettered: DONE; ABORTED if cancelled."""
        config = self.config
        attempt = 0
        while True:
            attempt += 1
            outcome = dispatch(self.app, record_environ(record, self.base))
            if outcome.ok:
                problem = self._reply(outcome, record)
                if problem is None:
                    return DONE
                outcome = Outcome(503, [], b"", f"its reply could not be produced to {config.kafka_reply_topic}: {problem}")
            if config.kafka_dead_letter_topic and (attempt > config.kafka_retries or not outcome.retryable):
                return self._dead_letter(record, outcome, attempt, work)
            delay = min(config.kafka_retry_backoff * 2 ** min(attempt - 1, 30), config.kafka_retry_backoff_max)
            log.warning("Record %s failed (attempt %d): %s; retrying in %.3gs%s", record.where, attempt, outcome.error, delay, self._forever_note())
            self.status.count(self.status.retried, record.topic)
            if work.cancel.wait(delay):
                return ABORTED

    def _forever_note(self) -> str:
        if self.config.kafka_dead_letter_topic or self._warned_forever:
            return ""
        self._warned_forever = True
        return " (KAFKA_DEAD_LETTER_TOPIC is not set: a failing record is retried until it succeeds, and its partition waits)"

    def _dead_letter(self, record: Record, outcome: Outcome, attempts: int, work: PartitionWork) -> str:
        topic = self.config.kafka_dead_letter_topic
        assert topic is not None
        letter = dead_letter_record(record, outcome.error, outcome.status, attempts)
        delay = self.config.kafka_retry_backoff
        while True:
            problem = self._produce(topic, letter)
            if problem is None:
                log.error("Record %s dead-lettered to %s after %d attempt(s): %s", record.where, topic, attempts, outcome.error)
                self.status.count(self.status.dead_lettered, record.topic)
                return DONE
            log.error("Record %s could not be dead-lettered to %s: %s; retrying in %.3gs", record.where, topic, problem, delay)
            if work.cancel.wait(delay):
                return ABORTED
            delay = min(delay * 2, self.config.kafka_retry_backoff_max)

    def _reply(self, outcome: Outcome, record: Record) -> str | None:
        topic = self.config.kafka_reply_topic
        if topic is None:
            return None
        reply = reply_record(outcome.headers, outcome.body, record)
        return None if reply is None else self._produce(topic, reply)

    def _produce(self, topic: str, outgoing: OutgoingRecord) -> str | None:
        """Produce and wait for the broker's acknowledgement: None, or why it failed."""
        assert self.producer is not None
        done = threading.Event()
        errors: list[Any] = []

        def delivered(error: Any, message: Any) -> None:
            errors.append(error)
            done.set()

        try:
            self.producer.produce(topic, value=outgoing.value, key=outgoing.key, headers=outgoing.headers, on_delivery=delivered)
        except (BufferError, self._KafkaException) as error:
            return str(error)
        while not done.is_set():
            self.producer.poll(0.05)  # serves delivery reports, this record's among them
        return None if errors[0] is None else errors[0].str()

def _names(partitions: list[Any]) -> str:
    return ", ".join(f"{item.topic}[{item.partition}]" for item in partitions)
