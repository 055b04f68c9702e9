"""Shutdown does not wait on telemetry: a real server, its trace collector down (a closed port) or silent
(a listener that never answers), stopped with SIGTERM while a call is in flight.

The process must end within a second of the call's answer (OpenTelemetry's exporter alone would retry
each batch for up to 10 s); the spans it could not deliver are counted in ``/metrics`` while it serves
and logged in one line when it stops.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.support.metrics import metric_total
from tests.support.polling import wait_for
from tests.support.ports import free_port
from tests.support.processes import FUNCWSGI, Server, http_get, start

pytestmark = pytest.mark.slow("starts a real server per case and stops it with SIGTERM, its collector down or silent")

#: Seconds from the last answer to the process's end: 1 s, as the issue asks, and half a second more for a
#: loaded 2-core machine (the exporter's retries alone held it 8 to 20 s).
EXIT_WITHIN = 1.5
DROPPED = "function_spans_dropped_total"
LOGGED = "could not be delivered to TRACE_COLLECTOR_ENDPOINT"


class Silent:
    """A collector that accepts connections and never answers."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.accepted: list[socket.socket] = []
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self) -> None:
        while True:
            try:
                self.accepted.append(self.listener.accept()[0])
            except OSError:
                return

    def close(self) -> None:
        self.listener.close()
        for connection in self.accepted:
            connection.close()


@pytest.fixture(params=["down", "silent"])
def collector_port(request: pytest.FixtureRequest) -> Iterator[int]:
    if request.param == "down":
        yield free_port()  # nothing listens there
        return
    silent = Silent()
    yield silent.port
    silent.close()


def test_sigterm_ends_the_process_soon_after_the_last_answer(collector_port, tmp_path):
    lifecycle = tmp_path / "lifecycle.log"
    server = start(
        FUNCWSGI + ["serve"],
        "serving",
        TRACE_COLLECTOR_ENDPOINT=f"http://127.0.0.1:{collector_port}/v1/traces",
        OTEL_BSP_SCHEDULE_DELAY="100",  # exports are tried (and fail) while the server serves
        LIFECYCLE_LOG=str(lifecycle),
    )
    try:
        for _ in range(20):
            assert http_get(server.host, server.port, "/")[0] < 500
        if _is_closed(collector_port):
            # A failed export counts its spans at once, before any shutdown.
            wait_for(lambda: _dropped(server) > 0, 10, "spans dropped counted in /metrics")
        with ThreadPoolExecutor(1) as pool:
            in_flight = pool.submit(http_get, server.host, server.port, "/sleep?s=0.5", 5.0)
            wait_for(lambda: lifecycle.exists() and "sleeping" in lifecycle.read_text(), 5, "the call in flight")
            server.signal()
            status, _ = in_flight.result(timeout=10)
            answered = time.monotonic()
        assert status == 200
        server.wait_exit(timeout=30)
        took = time.monotonic() - answered
        assert took <= EXIT_WITHIN, f"the process ended {took:.2f} s after the last answer\n{server.describe()}"
        output = server.stdout + server.stderr
        assert output.count(LOGGED) == 1, server.describe()
    finally:
        server.stop()


def _is_closed(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
    except OSError:
        return True
    return False


def _dropped(server: Server) -> float:
    return metric_total(http_get(server.host, server.port, "/metrics")[1].decode(), DROPPED)
