"""C14: slow and hostile clients: the six limits of docs/servers.md#slow-and-hostile-clients over raw sockets.

``SERVER_HEADER_TIMEOUT``, ``SERVER_BODY_TIMEOUT``, ``SERVER_SEND_TIMEOUT``,
``SERVER_KEEPALIVE_TIMEOUT``, ``SERVER_MAX_CONNECTIONS`` and
``SERVER_MAX_INFLIGHT``, each set small, observed as a client sees them: the
exact bytes of the runtime's own answers, when a connection is closed, and
whether quietly. Three launches side by side (the timeouts at one second;
the in-flight bound; the connection bound), and the timed clients of the
first all at once, so the module takes about three seconds per runtime.

funcwsgi's waitress, werkzeug and granian adapters do not keep these limits
whatever their settings (docs/servers.md#the-other-adapters, with the
measured figures); a runtime on one of them must say so at start-up, and
that warning is what each check verifies there instead.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor

import pytest

from ..support.metrics import metric_total
from ..support.polling import wait_for
from ..support.sockets import connect, is_closed
from .kit import Runtime, main_line, serve_many
from .slow_clients import (
    EARLIEST,
    LARGE,
    LATEST,
    TIMEOUTS,
    all_at_once,
    one_more_while_all_are_busy,
    outcome,
)
from .slow_clients import (
    TIMED as CLIENTS,
)

#: The runtime's own answers, byte for byte (funcwsgi/replies.py, closing_wire()).
REQUEST_TIMEOUT = (
    b"HTTP/1.1 408 Request Timeout\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 34\r\n"
    b"Connection: close\r\n\r\nthe request did not arrive in time"
)
OVERLOADED_TEXT = "the function is busy; retry later"
INFLIGHT = 3
CONNECTIONS = 4
#: Silent this long a connection may be closed for a new one at the connection limit (2 s on both
#: runtimes, longer than TCP's first retransmission timeout), plus the sweeps that find it.
QUIET = 2.75
#: funcwsgi's adapters without these limits, and the warning each prints at start-up instead.
WITHOUT_LIMITS = ("waitress", "werkzeug", "granian")
WARNING = "SERVER_ADAPTER={adapter} stops answering other callers, whatever its settings"


def adapter_without_limits(runtime: Runtime) -> str | None:
    adapter = runtime.launcher.env.get("SERVER_ADAPTER")
    return adapter if adapter in WITHOUT_LIMITS else None


@pytest.fixture(scope="module")
def launches(launcher) -> Iterator[dict[str, Runtime]]:
    with serve_many(launcher, {
        "timeouts": ("main", TIMEOUTS),
        "inflight": ("main", {"SERVER_MAX_INFLIGHT": str(INFLIGHT), "SERVER_NUMTHREADS": "8"}),
        "connections": ("main", {"SERVER_MAX_CONNECTIONS": str(CONNECTIONS), "SERVER_MAX_INFLIGHT": "0", "SERVER_NUMTHREADS": "8"}),
    }) as started:
        yield started


@pytest.fixture
def limited(launches) -> Callable[[str], Runtime | None]:
    """The launch named, or None after checking the start-up warning of an adapter that has no such limits."""

    def pick(name: str) -> Runtime | None:
        runtime = launches[name]
        adapter = adapter_without_limits(runtime)
        if adapter is None:
            return runtime
        wait_for(lambda: WARNING.format(adapter=adapter) in runtime.read_log(), 5, f"the start-up warning of SERVER_ADAPTER={adapter}", runtime.read_log)
        return None

    return pick


# -- the timeouts: every timed client at once --------------------------------------------




@pytest.fixture(scope="module")
def timed(launches) -> dict[str, Future[object]]:
    """Every timed client against the one-second launch, started together.

    None on an adapter without these limits: only its warning is checked there, and a client it never
    times out (a stalled body) would hold a call until SIGTERM's graceful timeout had run out.
    """
    if adapter_without_limits(launches["timeouts"]) is not None:
        return {}
    return all_at_once(CLIENTS, launches["timeouts"])


def closed_in_time(limited, timed: dict[str, Future[object]], client: str, expected: bytes) -> None:
    """On a runtime that keeps the limits: ``client`` got ``expected`` and its connection closed after about one second."""
    if limited("timeouts") is None:
        return
    answer, took = outcome(timed, client)
    assert answer == expected
    assert EARLIEST < took < LATEST, f"{took:.2f} s"


def test_a_head_not_complete_within_the_header_timeout_gets_408_and_is_closed(limited, timed):
    """Mutation caught: node:http's own bare 408 (no body), or a close without an answer."""
    closed_in_time(limited, timed, "slow_head", REQUEST_TIMEOUT)


def test_the_next_head_on_a_kept_alive_connection_has_the_header_timeout_too(limited, timed):
    """Mutation caught: node:http closing it quietly at the keep-alive timeout instead of answering 408."""
    closed_in_time(limited, timed, "slow_next_head", REQUEST_TIMEOUT)


def test_a_connection_that_sends_nothing_is_closed_quietly_at_the_header_timeout(limited, timed):
    """A 408 there could be taken by the client for the answer to the request it is about to send."""
    closed_in_time(limited, timed, "silent", b"")


def test_an_idle_keep_alive_connection_is_closed_quietly_after_the_keepalive_timeout(limited, timed):
    closed_in_time(limited, timed, "idle_after_an_answer", b"")


def test_a_body_that_pauses_longer_than_the_body_timeout_gets_408_and_is_closed(limited, timed):
    closed_in_time(limited, timed, "stalled_body", REQUEST_TIMEOUT)


def test_a_body_that_keeps_coming_is_read_whole_however_long_it_takes(limited, timed):
    """The body timeout bounds a pause, not the whole body (node:http's requestTimeout would be the whole)."""
    if limited("timeouts") is None:
        return
    interim, answer = outcome(timed, "trickling_body")
    assert interim == b"HTTP/1.1 100 Continue\r\n\r\n"
    assert answer.startswith(b"HTTP/1.1 200 ") and answer.endswith(b"\r\n\r\n6"), answer


def test_a_client_that_does_not_read_its_response_is_dropped_after_the_send_timeout(limited, timed):
    if limited("timeouts") is None:
        return
    received, took = outcome(timed, "unread_response")
    assert received < LARGE, f"the whole response ({received} bytes) waited two send timeouts for its client"
    assert took < LATEST, f"the rest took {took:.2f} s: the connection was not closed"


def test_a_client_that_reads_slowly_gets_its_whole_response(limited, timed):
    """The send timeout bounds a stall, not the whole response."""
    if limited("timeouts") is None:
        return
    received = outcome(timed, "slowly_read_response")
    assert received > LARGE, f"{received} bytes of a {LARGE}-byte echo and its head"


# -- the in-flight bound -----------------------------------------------------------------


def test_calls_past_the_inflight_bound_get_503_with_retry_after_and_are_counted(limited):
    """Mutation caught: counting the refused calls in function_calls_total as well, or refusing the probes."""
    runtime = limited("inflight")
    if runtime is None:
        return
    before = runtime.get("/metrics").text
    extra = 2
    with ThreadPoolExecutor(INFLIGHT + extra) as pool:
        calls = []
        for _ in range(INFLIGHT + extra):
            calls.append(pool.submit(runtime.get, "/sleep?seconds=1", timeout=10))
            time.sleep(0.02)
        time.sleep(0.1)
        probes = {path: runtime.get(path, timeout=5) for path in ("/healthz", "/health/readiness", "/metrics")}
        answers = [call.result() for call in calls]
    assert sorted(answer.status_code for answer in answers) == [200] * INFLIGHT + [503] * extra
    refused = [answer for answer in answers if answer.status_code == 503]
    for answer in refused:
        assert answer.text == OVERLOADED_TEXT
        assert answer.headers.get("Retry-After") == "1"
        assert answer.headers.get("Connection", "").lower() == "close"
    assert {path: answer.status_code for path, answer in probes.items()} == dict.fromkeys(probes, 200)
    after = runtime.get("/metrics").text
    assert metric_total(after, "function_rejected_total") == metric_total(before, "function_rejected_total") + extra
    admitted = metric_total(after, "function_calls_total", method="GET") - metric_total(before, "function_calls_total", method="GET")
    assert admitted == INFLIGHT, f"{admitted} calls counted: the refused ones never reached the function"
    assert runtime.get("/sleep?seconds=0").text == "slept", "the bound did not come back after the calls ended"


# -- the connection bound -----------------------------------------------------------------


def test_at_the_connection_limit_the_longest_waiting_connection_makes_room(limited):
    """node:http's own maxConnections would fail this: it drops the new connection instead."""
    runtime = limited("connections")
    if runtime is None:
        return
    idle = []
    try:
        for _ in range(CONNECTIONS):
            idle.append(connect(runtime.process.port))
            time.sleep(0.02)  # accepted in this order
        time.sleep(QUIET)  # silent this long, a connection may be closed for a new one
        assert runtime.get("/hello", timeout=5).text == "hello"
        wait_for(lambda: is_closed(idle[0]), 3, "the oldest idle connection closed")
        assert [is_closed(sock) for sock in idle] == [True] + [False] * (CONNECTIONS - 1), "more closed than the one needed, or not the oldest"
    finally:
        for sock in idle:
            sock.close()


def test_when_every_connection_is_busy_a_new_one_waits_and_is_answered_when_one_closes(limited):
    """No accepted connection is closed unanswered for being one too many: it waits as in the listen backlog."""
    runtime = limited("connections")
    if runtime is None:
        return
    before = metric_total(runtime.get("/metrics").text, "function_rejected_total")
    answer, took = one_more_while_all_are_busy(runtime, CONNECTIONS)
    assert answer.startswith(b"HTTP/1.1 200 ") and answer.endswith(b"hello"), answer
    assert took > 0.5, f"answered after {took:.2f} s: it was not held while every connection had a call"
    assert metric_total(runtime.get("/metrics").text, "function_rejected_total") == before


# -- bad values ---------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "value", "expected"), [
    ("SERVER_HEADER_TIMEOUT", "0", "a positive number of seconds up to 1000000"),
    ("SERVER_MAX_INFLIGHT", "-1", "a non-negative integer"),
])
def test_a_bad_limit_is_one_line_naming_the_variable_and_exit_2(launcher, name, value, expected):
    exited = launcher.run_to_exit("main", {name: value})
    assert exited.returncode == 2
    assert main_line(exited.stderr).endswith(f"{name}={value!r} is invalid: expected {expected}")
