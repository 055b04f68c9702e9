"""A bounded soak: a real server under a steady mix of calls, watched from /proc.

    python -m tests.reliability.soak --seconds 600        # what `make soak` runs
    python -m tests.reliability.soak --seconds 60 --json  # what CI runs (through tests/reliability/test_soak.py)

``--connections`` keep-alive connections (32) each send one call after
another, cycling through a fixed mix: normal calls, calls the function
fails (500), slow calls (200 after 50 ms), calls past the call timeout
(408) and CloudEvents in binary and structured mode. Every answer's status
is checked against the one its kind must get. Once a second the server's
worker processes are sampled for resident memory, threads and open file
descriptors. The run passes when no call got an unexpected status, no
connection failed, and after the warm-up each worker's memory grew less than
5 MB while its threads and descriptors stayed flat.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ..conftest import function_folder
from ..servers import Server, base_env, free_port
from .harness import SERVE, children, process_figures

CE_HEADERS = {"ce-specversion": "1.0", "ce-id": "1", "ce-type": "order.created", "ce-source": "/shop", "Content-Type": "application/json"}
STRUCTURED = json.dumps({"specversion": "1.0", "id": "2", "type": "order.paid", "source": "/shop", "data": {"id": 7}})


@dataclass(frozen=True)
class Kind:
    name: str
    method: str
    path: str
    status: int
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)


KINDS = {
    kind.name: kind
    for kind in (
        Kind("normal", "GET", "/", 200),
        Kind("failing", "GET", "/fail", 500),
        Kind("slow", "GET", "/sleep?s=0.05", 200),
        Kind("timed-out", "GET", "/sleep?s=1.2", 408),
        Kind("cloudevent-binary", "POST", "/event", 200, b'{"id": 7}', CE_HEADERS),
        Kind("cloudevent-structured", "POST", "/event", 200, STRUCTURED.encode(), {"Content-Type": "application/cloudevents+json"}),
    )
}
# One cycle of 20 calls: 10 normal, 2 failing, 3 slow, 1 timed out, 2 + 2 CloudEvents.
MIX = (
    ["normal"] * 10 + ["failing"] * 2 + ["slow"] * 3 + ["timed-out"] + ["cloudevent-binary"] * 2 + ["cloudevent-structured"] * 2
)
RSS_GROWTH_LIMIT_KB = 5 * 1024
# "Flat": the second half of the measured window needs no more than the first half did,
# give or take call threads the timeout layer starts late (each with its own doorbell descriptor).
THREAD_SLACK = 3
FD_SLACK = 6
# Threads a worker may ever run: the server's, the timeout layer's pool (2 per server thread), a few more.
EXTRA_THREADS = 6


@dataclass
class Tally:
    statuses: Counter[tuple[str, int]] = field(default_factory=Counter)
    unexpected: list[str] = field(default_factory=list)
    connection_errors: list[str] = field(default_factory=list)
    latencies: dict[str, list[float]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, kind: Kind, status: int, seconds: float) -> None:
        with self.lock:
            self.statuses[(kind.name, status)] += 1
            self.latencies.setdefault(kind.name, []).append(seconds)
            if status != kind.status and len(self.unexpected) < 50:
                self.unexpected.append(f"{kind.name}: {status}")


def caller(host: str, port: int, offset: int, stop: threading.Event, tally: Tally) -> None:
    connection = http.client.HTTPConnection(host, port, timeout=30)
    step = offset
    while not stop.is_set():
        kind = KINDS[MIX[step % len(MIX)]]
        step += 1
        began = time.perf_counter()
        try:
            connection.request(kind.method, kind.path, body=kind.body or None, headers=kind.headers)
            response = connection.getresponse()
            response.read()
        except (OSError, http.client.HTTPException) as error:
            with tally.lock:
                tally.connection_errors.append(f"{kind.name}: {type(error).__name__}: {error}")
            connection.close()
            connection = http.client.HTTPConnection(host, port, timeout=30)
            continue
        tally.record(kind, response.status, time.perf_counter() - began)
    connection.close()


def sample(master: int, adapter: str) -> dict[int, dict[str, int]]:
    """Figures of every process serving calls: the workers, or the server itself when it has none."""
    pids = children(master) if adapter in ("gunicorn", "granian") else [master]
    figures = {}
    for pid in pids:
        try:
            figures[pid] = process_figures(pid)
        except (OSError, KeyError):
            pass  # it ended between listing and reading
    return figures


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] if ordered else 0.0


def run(seconds: float, connections: int, adapter: str, workers: int, threads: int, warm_up: float | None = None) -> dict[str, Any]:
    warm_up = warm_up if warm_up is not None else max(4.0, min(60.0, seconds * 0.2))
    logs = tempfile.mkdtemp(prefix="funcwsgi-soak-")
    port = free_port()
    env = base_env(
        SERVER_ADAPTER=adapter,
        HANDLER_FOLDER=function_folder("serving"),
        SERVER_HOST="127.0.0.1",
        SERVER_PORT=str(port),
        SERVER_WORKERS=str(workers),
        SERVER_NUMTHREADS=str(threads),
        SERVER_CALL_TIMEOUT="1",
        LIFECYCLE_LOG=os.path.join(logs, "lifecycle.log"),
    )
    server = Server(SERVE, env, port)
    try:
        server.wait_ready()
        stop = threading.Event()
        tally = Tally()
        callers = [
            threading.Thread(target=caller, args=("127.0.0.1", port, i * 7, stop, tally), daemon=True) for i in range(connections)
        ]
        began = time.monotonic()
        for thread in callers:
            thread.start()
        samples: list[tuple[float, dict[int, dict[str, int]]]] = []
        while (elapsed := time.monotonic() - began) < seconds:
            samples.append((elapsed, sample(server.process.pid, adapter)))
            time.sleep(min(1.0, max(0.0, seconds - elapsed)))
        samples.append((time.monotonic() - began, sample(server.process.pid, adapter)))
        stop.set()
        for thread in callers:
            thread.join(timeout=35)
        took = time.monotonic() - began
        alive = server.process.poll() is None
    finally:
        server.stop()
    return report(tally, samples, warm_up, took, {"seconds": seconds, "connections": connections, "adapter": adapter, "workers": workers, "threads": threads}, alive)


def report(tally: Tally, samples: list[tuple[float, dict[int, dict[str, int]]]], warm_up: float, took: float, settings: dict[str, Any], alive: bool) -> dict[str, Any]:
    thread_ceiling = 3 * settings["threads"] + EXTRA_THREADS
    after = [(t, figures) for t, figures in samples if t >= warm_up]
    per_worker: dict[str, dict[str, Any]] = {}
    problems: list[str] = []
    if len(after) < 2:
        problems.append("fewer than two samples after the warm-up")
    else:
        first, last = after[0][1], after[-1][1]
        half = len(after) // 2
        for pid, start in first.items():
            series = [figures[pid] for _, figures in after if pid in figures]
            end = last.get(pid)
            if end is None:
                problems.append(f"worker {pid} ended during the soak")
                continue
            early, late = series[: max(1, half)], series[max(1, half) :] or series[-1:]
            figures = {
                "rss_kb_after_warm_up": start["rss_kb"],
                "rss_kb_at_end": end["rss_kb"],
                "rss_growth_kb": end["rss_kb"] - start["rss_kb"],
                "threads_first_half": [min(f["threads"] for f in early), max(f["threads"] for f in early)],
                "threads_second_half": [min(f["threads"] for f in late), max(f["threads"] for f in late)],
                "fds_first_half": [min(f["fds"] for f in early), max(f["fds"] for f in early)],
                "fds_second_half": [min(f["fds"] for f in late), max(f["fds"] for f in late)],
            }
            per_worker[str(pid)] = figures
            if figures["rss_growth_kb"] >= RSS_GROWTH_LIMIT_KB:
                problems.append(f"worker {pid} grew {figures['rss_growth_kb']} kB after the warm-up")
            if figures["threads_second_half"][1] > figures["threads_first_half"][1] + THREAD_SLACK:
                problems.append(f"worker {pid} threads grew from {figures['threads_first_half']} to {figures['threads_second_half']}")
            if max(f["threads"] for f in series) > thread_ceiling:
                problems.append(f"worker {pid} ran more than {thread_ceiling} threads")
            if figures["fds_second_half"][1] > figures["fds_first_half"][1] + FD_SLACK:
                problems.append(f"worker {pid} file descriptors grew from {figures['fds_first_half']} to {figures['fds_second_half']}")
    total = sum(tally.statuses.values())
    if tally.unexpected:
        problems.append(f"{len(tally.unexpected)} unexpected statuses, e.g. {tally.unexpected[:5]}")
    if tally.connection_errors:
        problems.append(f"{len(tally.connection_errors)} connection errors, e.g. {tally.connection_errors[:5]}")
    if not alive:
        problems.append("the server exited during the soak")
    if not total:
        problems.append("no call was answered")
    return {
        "settings": {**settings, "warm_up_seconds": warm_up},
        "seconds": round(took, 1),
        "calls": total,
        "calls_per_second": round(total / took, 1) if took else 0,
        "statuses": {f"{name} {status}": count for (name, status), count in sorted(tally.statuses.items())},
        "unexpected_statuses": len(tally.unexpected),
        "connection_errors": len(tally.connection_errors),
        "latency_ms": {
            name: {"p50": round(percentile(values, 0.5) * 1000, 1), "p99": round(percentile(values, 0.99) * 1000, 1)}
            for name, values in sorted(tally.latencies.items())
        },
        "workers": per_worker,
        "problems": problems,
        "passed": not problems,
    }


def print_report(result: dict[str, Any]) -> None:
    settings = result["settings"]
    print(
        f"soak: {settings['adapter']}, {settings['workers']} workers x {settings['threads']} threads, "
        f"{settings['connections']} connections, {result['seconds']} s (warm-up {settings['warm_up_seconds']:g} s)"
    )
    print(f"calls: {result['calls']} ({result['calls_per_second']}/s); unexpected statuses: {result['unexpected_statuses']}; connection errors: {result['connection_errors']}")
    for name, count in result["statuses"].items():
        latency = result["latency_ms"][name.rsplit(" ", 1)[0]]
        print(f"  {name:28} {count:8}   p50 {latency['p50']:7.1f} ms   p99 {latency['p99']:7.1f} ms")
    for pid, figures in result["workers"].items():
        print(
            f"worker {pid}: RSS {figures['rss_kb_after_warm_up']} -> {figures['rss_kb_at_end']} kB "
            f"({figures['rss_growth_kb']:+} kB), threads {figures['threads_first_half']} then {figures['threads_second_half']}, "
            f"fds {figures['fds_first_half']} then {figures['fds_second_half']}"
        )
    print("PASSED" if result["passed"] else "FAILED: " + "; ".join(result["problems"]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.reliability.soak", description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=float(os.environ.get("SOAK_SECONDS", "600")))
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--adapter", default="gunicorn", choices=["gunicorn", "waitress", "granian"])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=16)
    parser.add_argument("--json", action="store_true", help="also print the figures as one JSON object")
    args = parser.parse_args(argv)
    result = run(args.seconds, args.connections, args.adapter, args.workers, args.threads)
    print_report(result)
    if args.json:
        print(json.dumps(result))
    return 0 if result["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
