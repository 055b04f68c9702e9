"""The admission decisions (funcwsgi/serving/admission.py), with an injected clock."""

from __future__ import annotations

import pytest

from funcwsgi.config import Config
from funcwsgi.errors import ConfigError
from funcwsgi.serving.admission import INTERVAL, Admission


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def threads(target: float = 1.0, servers: int = 50, service: float | None = None) -> tuple[Admission, Clock]:
    clock = Clock()
    admission = Admission(target, servers, clock=clock)
    if service is not None:
        admission.finished(service)
    return admission, clock


def test_a_free_thread_always_takes_the_call():
    admission, _ = threads(service=60.0)  # even when calls are slow
    assert all(admission.admit(inflight) for inflight in range(50))


def test_a_burst_the_threads_clear_within_the_target_is_queued_whole():
    # 200 calls of 20 ms on 50 threads: the last waits 150 x 20 ms / 50 = 60 ms.
    admission, _ = threads(service=0.02)
    assert all(admission.admit(inflight) for inflight in range(200))
    # and up to nine tenths of a second's worth (AIM): 50 threads x 0.9 s / 20 ms = 2,250 calls waiting
    assert admission.admit(50 + 2249)
    assert not admission.admit(50 + 2250)


def test_a_call_that_would_wait_past_the_target_is_refused_at_once():
    admission, _ = threads(target=1.0, servers=4, service=0.25)
    # 4 threads of 0.25 s drain 16 calls a second: the 14th waiting call starts after 0.875 s,
    # within AIM (0.9) of the target, the 15th after 0.9375 s, past it.
    assert admission.admit(4 + 13)
    assert not admission.admit(4 + 14)


def test_the_service_time_is_a_smoothed_mean_of_finished_calls():
    admission, _ = threads()
    assert admission.service == 0.0
    admission.finished(0.1)
    assert admission.service == pytest.approx(0.1)
    for _ in range(200):
        admission.finished(0.3)
    assert admission.service == pytest.approx(0.3, rel=1e-3)


def test_before_any_call_finished_the_queue_is_admitted_and_the_start_is_the_backstop():
    admission, _ = threads(target=1.0, servers=2)
    assert admission.admit(1000)
    assert admission.start(0.999)
    assert not admission.start(1.001)


def test_the_queue_stands_when_every_delay_over_an_interval_was_past_the_target():
    admission, clock = threads(target=1.0, servers=2, service=0.001)
    admission.observe(1.2)
    assert not admission.standing
    clock.now += INTERVAL / 2
    admission.observe(1.5)
    assert not admission.standing and admission.admit(3)
    clock.now += INTERVAL / 2
    admission.observe(1.1)
    assert admission.standing
    assert not admission.admit(2)  # it would wait: refused at once
    assert admission.admit(1)  # a thread is free: it starts now
    admission.observe(0.2)  # one delay under the target: no longer standing
    assert not admission.standing and admission.admit(3)


def test_a_delay_under_the_target_within_the_interval_restarts_it():
    admission, clock = threads(target=1.0)
    admission.observe(1.2)
    clock.now += INTERVAL * 0.9
    admission.observe(0.5)
    clock.now += INTERVAL * 0.9
    admission.observe(1.2)
    clock.now += INTERVAL * 0.9
    admission.observe(1.2)
    assert not admission.standing
    clock.now += INTERVAL * 0.2
    admission.observe(1.2)
    assert admission.standing


def test_on_an_event_loop_calls_start_at_once_unless_the_lag_stands_past_the_target():
    clock = Clock()
    loop = Admission(1.0, 0, clock=clock)
    assert loop.admit(100_000)
    loop.observe(1.5)
    clock.now += INTERVAL
    loop.observe(1.5)
    assert not loop.admit(0)
    loop.observe(0.001)
    assert loop.admit(0)


def test_each_start_records_its_queueing_delay():
    recorded: list[float] = []
    admission = Admission(1.0, 2, clock=Clock(), record=recorded.append)
    admission.start(0.25)
    admission.start(2.0)
    assert recorded == [0.25, 2.0]
    assert admission.delay == 2.0


def test_the_target_may_not_exceed_the_call_timeout():
    with pytest.raises(ConfigError) as caught:
        Config.from_env({"SERVER_QUEUE_TARGET": "5", "SERVER_CALL_TIMEOUT": "3"})
    assert str(caught.value) == (
        "SERVER_QUEUE_TARGET=5 is invalid: expected at most SERVER_CALL_TIMEOUT (3), since a caller waits no longer than a call may take"
    )
    assert Config.from_env({"SERVER_QUEUE_TARGET": "5", "SERVER_CALL_TIMEOUT": "0"}).server_queue_target == 5.0
    assert Config.from_env({}).server_queue_target == 1.0


@pytest.mark.parametrize("raw", ["0", "-1", "soon", "inf"])
def test_a_bad_target_names_the_variable(raw):
    with pytest.raises(ConfigError, match=f"SERVER_QUEUE_TARGET={raw!r} is invalid: expected a positive number of seconds"):
        Config.from_env({"SERVER_QUEUE_TARGET": raw})


def test_the_default_target_is_a_shorter_call_timeout():
    assert Config.from_env({"SERVER_CALL_TIMEOUT": "0.5"}).server_queue_target == 0.5
    assert Config.from_env({"FUNC_TIMEOUT": "0.25"}).server_queue_target == 0.25
