"""Delivery from Kafka end to end: a real broker, ``funcwsgi serve`` with the kafka adapter as a real process.

One broker serves the whole module; each test uses its own topics and group.
Group joins take a few seconds on this broker, so each test starts as few
consumers as it can and checks several things with each.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator

import pytest
import requests

from tests.kafka.broker import TRACEPARENT, Broker, group_name, start, trigger_env, wait_calls
from tests.support.logs import json_lines, log_records
from tests.support.polling import wait_for
from tests.support.ports import free_port
from tests.support.processes import Server

pytestmark = pytest.mark.slow("each test has its consumers join a group on a real broker, and a join takes seconds")


@pytest.fixture(scope="module")
def broker() -> Iterator[Broker]:
    running = Broker()
    yield running
    running.stop()


def wait_for_span(collector: Server, trace_id: str, timeout: float = 15.0) -> dict:
    def arrived() -> dict | None:
        return next((span for span in log_records(collector.stdout) if span["traceId"] == trace_id), None)

    return wait_for(arrived, timeout, f"a span of trace {trace_id}", lambda: collector.stdout)


def test_records_reach_the_function_are_committed_and_cloudevents_are_replied(broker, collector, tmp_path):
    topic, replies = broker.create_topic(), broker.create_topic(prefix="replies")
    group, calls = group_name(), tmp_path / "calls.log"
    tracing = {"TRACE_COLLECTOR_ENDPOINT": f"http://127.0.0.1:{collector.port}/v1/traces", "OTEL_BSP_SCHEDULE_DELAY": "100"}
    server = start(trigger_env(broker.bootstrap, topic, group, calls, KAFKA_REPLY_TOPIC=replies, **tracing))
    try:
        broker.produce(topic, "plain", key="customer-1", headers={"traceparent": TRACEPARENT})
        broker.produce(topic, '{"n": 1}', headers=[
            ("ce_specversion", b"1.0"), ("ce_id", b"e-1"), ("ce_source", b"/shop"),
            ("ce_type", b"order.created"), ("content-type", b"application/json"),
        ])
        structured = '{"specversion": "1.0", "id": "e-2", "source": "/shop", "type": "order.paid", "data": {}}'
        broker.produce(topic, structured, headers={"content-type": "application/cloudevents+json"})
        broker.produce(topic, "reply:order-7", key="k-7")
        broker.wait_committed(group, topic, [4])
        plain, binary, structured_call, replied = wait_calls(calls, 4)
        assert plain["ce"]["type"] == "dev.knative.kafka.event"
        assert plain["ce"]["source"] == f"/kafka/{topic}"
        assert plain["ce"]["partitionkey"] == "customer-1"
        assert plain["traceparent"] == TRACEPARENT
        assert binary["ce"] == {"specversion": "1.0", "id": "e-1", "source": "/shop", "type": "order.created"}
        assert binary["content_type"] == "application/json" and binary["body"] == '{"n": 1}'
        assert structured_call["content_type"] == "application/cloudevents+json"
        assert structured_call["body"] == structured
        assert [call["offset"] for call in (plain, binary, structured_call, replied)] == [0, 1, 2, 3]

        # The record's trace context was continued: the call's span is a child of the producer's.
        span = wait_for_span(collector, TRACEPARENT.split("-")[1])
        assert span["parentSpanId"] == TRACEPARENT.split("-")[2]
        # OpenTelemetry's FaaS conventions for a call a message triggered.
        attributes = {item["key"]: next(iter(item["value"].values())) for item in span["attributes"]}
        assert attributes["faas.trigger"] == "pubsub" and attributes["messaging.system"] == "kafka"
        assert (attributes["messaging.destination.name"], attributes["messaging.destination.partition.id"]) == (topic, "0")
        assert (attributes["messaging.kafka.offset"], attributes["messaging.kafka.message.key"]) == ("0", "customer-1")
        assert attributes["faas.invocation_id"] and attributes["faas.coldstart"] is True

        # Only the CloudEvent the function returned was produced; "ok" replies were not.
        (reply,) = broker.read(replies, 1)
        headers = dict(reply.headers())
        assert headers["ce_type"] == b"dev.funcwsgi.test.reply"
        assert headers["ce_id"] == b"reply-3"
        assert headers["ce_source"] == b"/tests/kafka"
        assert headers["content-type"] == b"text/plain"
        assert reply.value() == b"replied to order-7"
        assert reply.key() == b"k-7"
        time.sleep(0.3)
        assert len(broker.read(replies, 1)) == 1, "a non-CloudEvent response was produced as a reply"

        # Probes answer over HTTP; the function does not.
        assert requests.get(server.url + "/healthz", timeout=5).text == "OK"
        assert requests.get(server.url + "/health/liveness", timeout=5).status_code == 200
        server.wait_ready("/health/readiness")
        assert requests.get(server.url + "/health/readiness", timeout=5).status_code == 200
        assert requests.post(server.url + "/", data="x", timeout=5).status_code == 404
    finally:
        server.stop()


def test_a_failing_record_is_retried_then_dead_lettered_and_its_partition_moves_on(broker, tmp_path):
    topic, dead = broker.create_topic(), broker.create_topic(prefix="dead")
    group, calls = group_name(), tmp_path / "calls.log"
    server = start(trigger_env(broker.bootstrap, topic, group, calls, KAFKA_DEAD_LETTER_TOPIC=dead, KAFKA_RETRIES="2"))
    try:
        broker.produce(topic, "fail:order-9", key="k9", headers={"ce_specversion": "1.0", "ce_id": "e9", "ce_source": "/s", "ce_type": "t"})
        broker.produce(topic, "malformed", headers={"ce_specversion": "1.0", "ce_id": "e10"})  # no source, no type
        broker.produce(topic, "after")
        broker.wait_committed(group, topic, [3])
        metrics = wait_metric(server, f'kafka_dead_lettered_records_total{{topic="{topic}"}} 2.0')
        assert f'kafka_retried_records_total{{topic="{topic}"}} 2.0' in metrics
        wait_metric(server, f'kafka_consumer_lag{{partition="0",topic="{topic}"}} 0.0')
        bodies = [call["body"] for call in wait_calls(calls, 4)]
        assert bodies == ["fail:order-9"] * 3 + ["after"]  # 1 call + 2 retries; the malformed event never reaches it
        letter, malformed = broker.read(dead, 2)
        headers = dict(letter.headers())
        assert letter.value() == b"fail:order-9" and letter.key() == b"k9"
        assert headers["ce_id"] == b"e9"  # still the same CloudEvent
        assert headers["funcwsgi_error"] == b"500 Internal Server Error: RuntimeError: refusing order-9"
        assert headers["funcwsgi_attempts"] == b"3"
        assert headers["funcwsgi_original_offset"] == b"0"
        # A record no retry can fix (400: not a valid CloudEvent) is dead-lettered at once.
        malformed_headers = dict(malformed.headers())
        assert malformed.value() == b"malformed"
        assert malformed_headers["funcwsgi_attempts"] == b"1"
        assert malformed_headers["funcwsgi_error_status"] == b"400"
        assert malformed_headers["funcwsgi_error"].startswith(b"400 Bad Request: ")
        log = server.wait_for_output("dead-lettered")
        assert f"Record {topic}[0]@0 dead-lettered to {dead} after 3 attempt(s)" in log
    finally:
        server.stop()


def test_a_crash_redelivers_what_was_not_committed_and_nothing_else(broker, tmp_path):
    topic, group, calls = broker.create_topic(), group_name(), tmp_path / "calls.log"
    env = trigger_env(broker.bootstrap, topic, group, calls)
    first = start(env)
    try:
        broker.produce(topic, "a")
        broker.produce(topic, "b")
        broker.wait_committed(group, topic, [2])
        broker.produce(topic, "crash")
        broker.produce(topic, "c")
        assert first.wait_exit(30) == 3  # the function killed the process at "crash"
    finally:
        first.stop()
    assert broker.committed(group, topic) == [2], "nothing past the crashed record was committed"
    assert [call["body"] for call in json_lines(calls)] == ["a", "b"]

    second = start(env, assigned=False)
    try:
        broker.wait_committed(group, topic, [4], timeout=30)
        assert [(call["offset"], call["body"]) for call in json_lines(calls)] == [(0, "a"), (1, "b"), (2, "crash"), (3, "c")]
    finally:
        second.stop()


def test_two_consumers_in_one_group_split_the_partitions(broker, tmp_path):
    topic, group, calls = broker.create_topic(partitions=4), group_name(), tmp_path / "calls.log"
    first = start(trigger_env(broker.bootstrap, topic, group, calls))
    second = start(trigger_env(broker.bootstrap, topic, group, calls))
    try:
        first.wait_for_output("Revoked", timeout=30)  # the rebalance that made room for the second
        deadline = time.monotonic() + 30
        while first.stdout.count("Assigned") < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        for partition in range(4):
            for n in range(2):
                broker.produce(topic, f"p{partition}-{n}", partition=partition)
        broker.wait_committed(group, topic, [2, 2, 2, 2], partitions=range(4), timeout=30)
        served: dict[int, set[int]] = {}
        for call in json_lines(calls):
            served.setdefault(call["partition"], set()).add(call["pid"])
        assert sorted(served) == [0, 1, 2, 3]
        assert all(len(pids) == 1 for pids in served.values()), f"a partition was served by both: {served}"
        owners = {pid for pids in served.values() for pid in pids}
        assert owners == {first.process.pid, second.process.pid}
        assert len(json_lines(calls)) == 8
    finally:
        first.stop()
        second.stop()


def test_sigterm_finishes_records_in_flight_commits_and_leaves(broker, tmp_path):
    topic, group, calls = broker.create_topic(partitions=2), group_name(), tmp_path / "calls.log"
    server = start(trigger_env(broker.bootstrap, topic, group, calls, SERVER_NUMTHREADS="2"))
    try:
        broker.produce(topic, "slow:3", partition=0)
        broker.produce(topic, "queued", partition=0)
        broker.produce(topic, "fail:forever", partition=1)
        broker.produce(topic, "behind-the-failure", partition=1)
        wait_calls(calls, 2)  # the slow call is running, the failing one retrying
        server.wait_for_output("KAFKA_DEAD_LETTER_TOPIC is not set")
        # Partition 1 is stuck on its failing record: both its records count as lag.
        metrics = wait_metric(server, f'kafka_consumer_lag{{partition="1",topic="{topic}"}} 2.0')
        assert f'kafka_retried_records_total{{topic="{topic}"}}' in metrics
        assert "kafka_brokers_connected 1.0" in metrics
        assert 'function_calls_total{method="POST"}' in metrics  # the call metrics count records too
        server.signal(signal.SIGTERM)
        assert server.wait_exit(15) == 0
        output = server.stdout + server.stderr
        assert "Stopping: finishing 2 record(s) in flight" in output
        assert f"left group '{group}'" in output
        assert (tmp_path / "calls.log.stopped").exists(), "the function's stop() hook ran"
        # The slow record finished and was committed; nothing queued behind it started;
        # the failing record and the one behind it stay uncommitted for the next consumer.
        assert broker.committed(group, topic, [0, 1]) == [1, -1001]
        bodies = [call["body"] for call in json_lines(calls)]
        assert "queued" not in bodies and "behind-the-failure" not in bodies
        assert bodies.count("slow:3") == 1 and bodies.count("fail:forever") >= 1
    finally:
        server.stop()


def wait_metric(server, line: str, timeout: float = 10.0) -> str:
    deadline = time.monotonic() + timeout
    while True:
        text = requests.get(server.url + "/metrics", timeout=5).text
        if line in text.splitlines():
            return text
        if time.monotonic() > deadline:
            raise AssertionError(f"{line!r} not in /metrics:\n{text}")
        time.sleep(0.1)


def wait_status(url: str, status: int, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while requests.get(url, timeout=5).status_code != status:
        if time.monotonic() > deadline:
            raise AssertionError(f"{url} did not answer {status} within {timeout}s")
        time.sleep(0.1)


def test_an_unreachable_broker_means_not_ready_then_reconnects_and_again_later(tmp_path):
    port, metrics_port = free_port(), free_port()
    env = trigger_env(f"127.0.0.1:{port}", "late", group_name(), tmp_path / "calls.log", SERVER_METRICS_PORT=str(metrics_port))
    server = start(env, assigned=False)
    late = None
    try:
        server.wait_for_output("unreachable", timeout=15)
        assert requests.get(server.url + "/health/readiness", timeout=5).status_code == 503
        # Metrics on a port of their own carry the trigger's series too; SERVER_PORT then has none.
        metrics = requests.get(f"http://127.0.0.1:{metrics_port}/metrics", timeout=5).text
        assert "kafka_brokers_connected 0.0" in metrics.splitlines()
        assert requests.get(server.url + "/metrics", timeout=5).status_code == 404
        assert requests.get(server.url + "/healthz", timeout=5).status_code == 200  # alive: no crash loop
        assert server.process.poll() is None
        late = Broker(port)
        server.wait_for_output("Connected to the Kafka brokers", timeout=20)
        server.wait_ready("/health/readiness", timeout=10)
        assert requests.get(server.url + "/health/readiness", timeout=5).status_code == 200

        # Gone again later: not ready, still alive, and said once more in the log.
        late.stop()
        wait_status(server.url + "/health/readiness", 503)
        assert server.stdout.count("unreachable") == 2, server.stdout
        assert requests.get(server.url + "/healthz", timeout=5).status_code == 200
        assert server.process.poll() is None
    finally:
        server.stop()
        if late is not None:
            late.stop()


def test_a_partition_paused_for_backpressure_loses_and_repeats_nothing(broker, monkeypatch):
    # In-process, with the pause threshold lowered so that a short run crosses it many times.
    import threading

    import funcwsgi.kafka.consumer as consumer
    from funcwsgi import make_app

    monkeypatch.setattr(consumer, "PAUSE_AT", 5)
    topic, group, seen = broker.create_topic(), group_name(), []

    def main(req):
        seen.append(req.environ["funcwsgi.kafka.record"].offset)
        time.sleep(0.005)

    for number in range(60):
        broker.producer.produce(topic, value=str(number).encode(), partition=0)
    broker.producer.flush(10)
    app = make_app(
        main, environ={}, server_adapter="kafka", kafka_brokers=(broker.bootstrap,), kafka_topics=(topic,),
        kafka_group_id=group, kafka_client_config={"session.timeout.ms": "3000", "heartbeat.interval.ms": "300"}, server_access_log=False,
    )
    trigger = consumer.KafkaTrigger(app, app.config)
    pauses: list[int] = []
    original_accept = trigger._accept

    def accept_and_watch(message):
        original_accept(message)
        work = trigger.partitions.get((topic, 0))
        if work is not None and work.paused and (not pauses or pauses[-1] != id(work)):
            pauses.append(id(work))

    trigger._accept = accept_and_watch  # type: ignore[method-assign]
    running = threading.Thread(target=trigger.run)
    running.start()
    try:
        broker.wait_committed(group, topic, [60], timeout=30)
    finally:
        trigger.stop()
        running.join(30)
    assert pauses, "the partition was never paused"
    assert seen == list(range(60))
