"""A bounded soak: a real server under a steady mix of calls, watched from /proc.

    python -m tests.reliability.soak --seconds 600        # what `make soak` runs
    python -m tests.reliability.soak --seconds 60 --json  # what CI runs (through tests/reliability/test_soak.py)
    python -m tests.reliability.soak --seconds 1200 --calls 100000 --traced   # every call traced to oteltap

``--connections`` keep-alive connections (32) each send one call after
another, cycling through a fixed mix: normal calls, calls the function
fails (500), slow calls (200 after 50 ms), calls past the call timeout
(408) and CloudEvents in binary and structured mode. Every answer's status
is checked against the one its kind must get. About a hundred times a run the server's
worker processes are sampled for resident memory, threads and open file
descriptors, together with the number of calls answered so far. The run
passes when no call got an unexpected status, no connection failed, no
worker ended or ran more threads than its bound, and after the warm-up the
workers' memory, threads and descriptors show no growth per call: each
figure's regression slope against the calls answered is within its
tolerance, or the growth it makes over the run is within the figure's noise
(:class:`Trend`). The criteria do not depend on the run's length.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ..support.paths import BIN, function_folder
from ..support.ports import free_port
from ..support.processes import SERVE, Server, base_env, children, process_figures, stop_group

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
# What a worker may keep per call, judged as a trend: the least-squares slope of each figure
# (summed over the workers) against the calls answered so far, after the warm-up. A figure
# fails when its slope is over the tolerance *and* the growth that slope makes over the
# measured calls is more than the figure's noise; the same rule for a run of 8 s, 60 s or
# 10 minutes (a longer run only sees a slope more sharply).
#
# Memory: 256 bytes per call (a leak of 4.7 kB per call is 18 times that), noise 3 MB
# (the allocator grows in steps of arenas; two workers grew 0.2-0.9 MB in quiet runs).
RSS_BYTES_PER_CALL = 256
RSS_NOISE_KB = 3 * 1024
# Threads and descriptors: one per 10 000 calls; noise per worker 5 threads (gthread starts
# a thread for each call stuck past its timeout, up to its bound, and keeps it: on a busy
# machine an 8 s run still sees a worker go from 22 to 27) and 6 descriptors (each 408
# closes its connection, so the callers' 32 connections are being re-made and move
# between the workers at every sample).
THREADS_PER_CALL = 1e-4
THREAD_NOISE_PER_WORKER = 5
FDS_PER_CALL = 1e-4
FD_NOISE_PER_WORKER = 6
# The warm-up: 20 % of the run (4 s to 60 s), and at least this many calls per server thread,
# so that a machine too busy to serve many calls still gets its pools started before measuring.
WARM_UP_CALLS_PER_THREAD = 20
# "Served throughout": no connection waits longer than this for an answer.
LONGEST_WAIT_SECONDS = 20.0
# Threads a worker may ever run: the server's, the timeout layer's pool (2 per server thread), a few more.
EXTRA_THREADS = 6
# A 503 is admission's answer to a call that would have waited past SERVER_QUEUE_TARGET (1 s here):
# on a machine loaded far past its cores (CI once saw one at a load of 8 on two cores) a call can,
# and refusing it is the runtime's duty. The soak judges leaks, so such refusals pass up to this
# share of the calls; more is a runtime refusing what it should serve.
REFUSED_SHARE = 0.01


@dataclass(frozen=True)
class Trend:
    """How one figure moved against the calls answered: its fitted slope, the growth it makes, and
    the slope of the later half of the samples alone."""

    figure: str
    unit: str
    slope_per_call: float
    fitted_growth: float
    later_slope_per_call: float
    tolerance_per_call: float
    noise: float

    @property
    def grows(self) -> bool:
        # A leak grows all along; a pool filling up to its bound (a busy machine starts the
        # server's threads late) grows early and stops: the later half tells them apart.
        return self.slope_per_call > self.tolerance_per_call and self.fitted_growth > self.noise and self.later_slope_per_call > self.tolerance_per_call

    def describe(self) -> str:
        return (
            f"{self.figure} {self.slope_per_call:+.3g} {self.unit}/call (tolerance {self.tolerance_per_call:g}; "
            f"later half {self.later_slope_per_call:+.3g}), {self.fitted_growth:+.4g} {self.unit} over the measured calls (noise {self.noise:g})"
        )


def slope(points: list[tuple[float, float]]) -> float:
    """The least-squares slope of y over x; 0 when x does not vary."""
    count = len(points)
    mean_x = sum(x for x, _ in points) / count
    mean_y = sum(y for _, y in points) / count
    spread = sum((x - mean_x) ** 2 for x, _ in points)
    if spread == 0:
        return 0.0
    return sum((x - mean_x) * (y - mean_y) for x, y in points) / spread


def trend(figure: str, unit: str, points: list[tuple[float, float]], tolerance: float, noise: float) -> Trend:
    per_call = slope(points)
    calls = points[-1][0] - points[0][0]
    return Trend(figure, unit, per_call, per_call * calls, slope(points[len(points) // 2 :]), tolerance, noise)


@dataclass
class Tally:
    statuses: Counter[tuple[str, int]] = field(default_factory=Counter)
    unexpected: list[str] = field(default_factory=list)
    refused: int = 0  # 503s (admission under overload)
    connection_errors: list[str] = field(default_factory=list)
    latencies: dict[str, list[float]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    answered: int = 0
    #: Per connection: calls answered, and the longest it waited for an answer (or since its last one, at the end).
    per_connection: dict[int, list[float]] = field(default_factory=dict)

    def record(self, kind: Kind, status: int, seconds: float) -> None:
        with self.lock:
            self.answered += 1
            self.statuses[(kind.name, status)] += 1
            self.latencies.setdefault(kind.name, []).append(seconds)
            if status == 503 and kind.status != 503:
                self.refused += 1
            elif status != kind.status and len(self.unexpected) < 50:
                self.unexpected.append(f"{kind.name}: {status}")


def caller(host: str, port: int, offset: int, stop: threading.Event, tally: Tally) -> None:
    connection = http.client.HTTPConnection(host, port, timeout=30)
    step = offset
    mine = tally.per_connection.setdefault(offset, [0, 0.0])
    last_answer = time.monotonic()
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
        now = time.monotonic()
        mine[0] += 1
        mine[1] = max(mine[1], now - last_answer)
        last_answer = now
    mine[1] = max(mine[1], time.monotonic() - last_answer)
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


Sample = tuple[float, int, dict[int, dict[str, int]]]  # (seconds since the start, calls answered, figures per worker)


def sample_every(seconds: float) -> float:
    """The sampling interval: about a hundred samples a run, between 0.25 s and 2 s apart."""
    return max(0.25, min(2.0, seconds / 100))


class Receiver:
    """A real OTLP/HTTP trace receiver (oteltap) for a traced soak; what it prints is thrown away."""

    def __init__(self) -> None:
        self.port = free_port()
        self.process = subprocess.Popen(
            [str(BIN / "oteltap"), "--port", str(self.port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
        )
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError("the trace receiver (oteltap) did not start listening within 20 s")

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1/traces"

    def stop(self) -> None:
        stop_group(self.process)


def run(
    seconds: float, connections: int, adapter: str, workers: int, threads: int, warm_up: float | None = None, *, calls: int | None = None, traced: bool = False
) -> dict[str, Any]:
    """The soak for ``seconds`` at most, or until ``calls`` are answered; ``traced``: every call traced to a real receiver."""
    warm_up = warm_up if warm_up is not None else max(4.0, min(60.0, seconds * 0.2))
    logs = tempfile.mkdtemp(prefix="funcwsgi-soak-")
    port = free_port()
    receiver = Receiver() if traced else None
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
    if receiver is not None:
        env["TRACE_COLLECTOR_ENDPOINT"] = receiver.endpoint
    server = Server(SERVE, env, port)
    interval = sample_every(seconds)
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
        samples: list[Sample] = []
        while (elapsed := time.monotonic() - began) < seconds and (calls is None or tally.answered < calls):
            samples.append((elapsed, tally.answered, sample(server.process.pid, adapter)))
            time.sleep(min(interval, max(0.0, seconds - elapsed)))
        samples.append((time.monotonic() - began, tally.answered, sample(server.process.pid, adapter)))
        stop.set()
        for thread in callers:
            thread.join(timeout=35)
        took = time.monotonic() - began
        alive = server.process.poll() is None
    finally:
        server.stop()
        if receiver is not None:
            receiver.stop()
    settings = {
        "seconds": seconds, "connections": connections, "adapter": adapter, "workers": workers, "threads": threads, "sample_seconds": interval,
        "calls": calls, "traced": traced,
    }
    return report(tally, samples, warm_up, took, settings, alive)


def report(tally: Tally, samples: list[Sample], warm_up: float, took: float, settings: dict[str, Any], alive: bool) -> dict[str, Any]:
    thread_ceiling = 3 * settings["threads"] + EXTRA_THREADS
    warm_up_calls = WARM_UP_CALLS_PER_THREAD * settings["workers"] * settings["threads"]
    after = [(calls, figures) for t, calls, figures in samples if t >= warm_up and calls >= warm_up_calls]
    per_worker: dict[str, dict[str, Any]] = {}
    trends: list[Trend] = []
    problems: list[str] = []
    if len(after) < 5:
        problems.append(f"{len(after)} samples after the warm-up, fewer than 5")
    elif after[-1][0] - after[0][0] < 100:
        problems.append(f"only {after[-1][0] - after[0][0]} calls answered after the warm-up")
    else:
        pids = sorted(after[0][1])
        for pid in pids:
            series = [figures[pid] for _, figures in after if pid in figures]
            if pid not in after[-1][1]:
                problems.append(f"worker {pid} ended during the soak")
                continue
            per_worker[str(pid)] = {
                "rss_kb": [series[0]["rss_kb"], series[-1]["rss_kb"]],
                "threads": [min(f["threads"] for f in series), max(f["threads"] for f in series)],
                "fds": [min(f["fds"] for f in series), max(f["fds"] for f in series)],
            }
            if max(f["threads"] for f in series) > thread_ceiling:
                problems.append(f"worker {pid} ran more than {thread_ceiling} threads")
        # Summed over the workers: how the calls (and the connections) are shared out between
        # them moves from sample to sample; what all of them keep per call does not.
        complete = [(calls, figures) for calls, figures in after if all(pid in figures for pid in pids)]

        def total(name: str, scale: float = 1.0) -> list[tuple[float, float]]:
            return [(float(calls), sum(figures[pid][name] for pid in pids) * scale) for calls, figures in complete]

        if len(complete) >= 5 and not any("ended" in problem for problem in problems):
            trends = [
                trend("memory", "bytes", total("rss_kb", 1024.0), RSS_BYTES_PER_CALL, RSS_NOISE_KB * 1024.0),
                trend("threads", "threads", total("threads"), THREADS_PER_CALL, THREAD_NOISE_PER_WORKER * len(pids)),
                trend("descriptors", "fds", total("fds"), FDS_PER_CALL, FD_NOISE_PER_WORKER * len(pids)),
            ]
            problems.extend(f"the workers' {found.describe()}" for found in trends if found.grows)
    total_calls = sum(tally.statuses.values())
    unserved = sorted(offset for offset, (answered, _) in tally.per_connection.items() if not answered)
    if unserved:
        problems.append(f"{len(unserved)} connections got no answer")
    longest_wait = max((wait for _, wait in tally.per_connection.values()), default=0.0)
    if longest_wait > LONGEST_WAIT_SECONDS:
        problems.append(f"a connection waited {longest_wait:.1f} s for an answer (at most {LONGEST_WAIT_SECONDS:g} s)")
    if tally.refused > REFUSED_SHARE * total_calls:
        problems.append(f"{tally.refused} calls refused with 503, more than {REFUSED_SHARE:.0%} of {total_calls}")
    if tally.unexpected:
        problems.append(f"{len(tally.unexpected)} unexpected statuses, e.g. {tally.unexpected[:5]}")
    if tally.connection_errors:
        problems.append(f"{len(tally.connection_errors)} connection errors, e.g. {tally.connection_errors[:5]}")
    if not alive:
        problems.append("the server exited during the soak")
    if not total_calls:
        problems.append("no call was answered")
    return {
        "settings": {**settings, "warm_up_seconds": warm_up},
        "seconds": round(took, 1),
        "calls": total_calls,
        "calls_per_second": round(total_calls / took, 1) if took else 0,
        "measured_calls": after[-1][0] - after[0][0] if after else 0,
        "samples_after_warm_up": len(after),
        "longest_wait_seconds": round(longest_wait, 2),
        "statuses": {f"{name} {status}": count for (name, status), count in sorted(tally.statuses.items())},
        "unexpected_statuses": len(tally.unexpected),
        "refused": tally.refused,
        "connection_errors": len(tally.connection_errors),
        "latency_ms": {
            name: {"p50": round(percentile(values, 0.5) * 1000, 1), "p99": round(percentile(values, 0.99) * 1000, 1)}
            for name, values in sorted(tally.latencies.items())
        },
        "workers": per_worker,
        "trends": {
            found.figure: {
                "per_call": found.slope_per_call,
                "later_per_call": found.later_slope_per_call,
                "fitted_growth": round(found.fitted_growth, 1),
                "grows": found.grows,
            }
            for found in trends
        },
        "problems": problems,
        "passed": not problems,
    }


def print_report(result: dict[str, Any]) -> None:
    settings = result["settings"]
    print(
        f"soak: {settings['adapter']}, {settings['workers']} workers x {settings['threads']} threads, "
        f"{settings['connections']} connections, {result['seconds']} s (warm-up {settings['warm_up_seconds']:g} s)"
    )
    print(
        f"calls: {result['calls']} ({result['calls_per_second']}/s); unexpected statuses: {result['unexpected_statuses']}; "
        f"refused (503): {result['refused']}; "
        f"connection errors: {result['connection_errors']}; longest wait for an answer: {result['longest_wait_seconds']} s"
    )
    for name, count in result["statuses"].items():
        latency = result["latency_ms"][name.rsplit(" ", 1)[0]]
        print(f"  {name:28} {count:8}   p50 {latency['p50']:7.1f} ms   p99 {latency['p99']:7.1f} ms")
    for pid, figures in result["workers"].items():
        print(
            f"worker {pid} after the warm-up: RSS {figures['rss_kb'][0]} -> {figures['rss_kb'][1]} kB, "
            f"threads {figures['threads'][0]}-{figures['threads'][1]}, fds {figures['fds'][0]}-{figures['fds'][1]}"
        )
    units = {"memory": "bytes", "threads": "threads", "descriptors": "fds"}
    for name, found in result["trends"].items():
        print(
            f"trend of the workers' {name} over {result['measured_calls']} calls ({result['samples_after_warm_up']} samples): "
            f"{found['per_call']:+.3g} {units[name]}/call (later half {found['later_per_call']:+.3g}), {found['fitted_growth']:+g} {units[name]} fitted"
            + (" GROWS" if found["grows"] else "")
        )
    print("PASSED" if result["passed"] else "FAILED: " + "; ".join(result["problems"]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.reliability.soak", description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=float(os.environ.get("SOAK_SECONDS", "600")))
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--adapter", default="gunicorn", choices=["gunicorn", "waitress", "granian"])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=16)
    parser.add_argument("--calls", type=int, help="stop once this many calls are answered (--seconds still bounds the run)")
    parser.add_argument("--traced", action="store_true", help="trace every call to a real OTLP receiver (oteltap)")
    parser.add_argument("--json", action="store_true", help="also print the figures as one JSON object")
    args = parser.parse_args(argv)
    result = run(args.seconds, args.connections, args.adapter, args.workers, args.threads, calls=args.calls, traced=args.traced)
    print_report(result)
    if args.json:
        print(json.dumps(result))
    return 0 if result["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
