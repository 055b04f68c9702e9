"""eventloop/gate.py: admission on the loop, and each admitted call's wait in the metrics."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

from funcwsgi.config import Config
from funcwsgi.eventloop.gate import LoopGate
from funcwsgi.metrics.calls import LocalCallMetrics, call_metrics

LOADED = SimpleNamespace(name="main", path="handler.py")


def waits_scraped(metrics: LocalCallMetrics) -> tuple[float, float]:
    """(count, count in the first bucket) of ``function_queueing_delay_seconds``, as a scrape reads them."""
    family = next(family for family in metrics.collect() if family.name == "function_queueing_delay_seconds")
    samples = {(sample.name, sample.labels.get("le")): sample.value for sample in family.samples}
    return samples[("function_queueing_delay_seconds_count", None)], samples[("function_queueing_delay_seconds_bucket", "0.001")]


def test_every_admitted_call_is_in_a_scrape_made_right_after_it():
    config = Config.from_env({})
    metrics = call_metrics(config)
    assert isinstance(metrics, LocalCallMetrics)
    gate = LoopGate(config, LOADED)
    count, quick = waits_scraped(metrics)
    assert all(gate.enter("/") for _ in range(3))
    assert gate.enter("/healthz")  # a probe waits for nothing: not counted
    assert waits_scraped(metrics) == (count + 3, quick + 3)  # the lag measured last: none yet
    assert waits_scraped(metrics) == (count + 3, quick + 3)  # recorded once


def test_the_calls_admitted_are_recorded_at_the_lag_they_waited_when_it_is_measured_again():
    config = Config.from_env({})
    metrics = call_metrics(config)
    assert isinstance(metrics, LocalCallMetrics)
    gate = LoopGate(config, LOADED)
    loop = asyncio.new_event_loop()
    try:
        waits = metrics.queued.calls
        assert gate.enter("/") and gate.enter("/")
        gate.tick(loop, loop.time() - 0.5)  # the loop ran half a second late: later calls waited that long
        assert metrics.queued.calls == waits + 2
        before = waits_scraped(metrics)
        assert gate.enter("/")
        count, quick = waits_scraped(metrics)
        assert (count, quick) == (before[0] + 1, before[1])  # its wait was the half second, not under a millisecond
    finally:
        loop.close()
