"""Where a traced call's server CPU goes over HTTP: each thread of the serving worker, per request.

    python -m bench.thread_cpu [--rounds 2] [--seconds 5]

funcwsgi on gunicorn (the ``make bench`` targets ``funcwsgi-gunicorn`` and
``funcwsgi-gunicorn-tracing``, the second exporting to the stand-in OTLP
receiver) is loaded with wrk at 16 connections, pinned as ``make bench`` pins,
rounds alternating. Each thread's user and system time is read from
``/proc/PID/task`` before and after the load and divided by the requests
answered. Python 3.11 gives its threads no names the kernel sees, so threads
are grouped by what tells them apart: the worker's main thread runs the event
loop; the calls' threads share the calls evenly; the one more thread the traced
worker busies is the batch span processor's, which encodes and sends the spans.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from tests.support.ports import free_port
from tests.support.processes import children

from .load import run_wrk
from .processes import CLOCK_TICKS, server_and_load_cores, start
from .run import EXPECTED_BODY, Sink, resolve_command
from .targets import Target, all_targets, environment

TARGETS = ("funcwsgi-gunicorn", "funcwsgi-gunicorn-tracing")
#: A thread that took more than this many times the median thread's CPU is not one of the calls' threads.
OUTLIER = 3.0


def thread_times(pid: int) -> dict[int, tuple[int, int]]:
    """User and system clock ticks of each thread of ``pid``."""
    times: dict[int, tuple[int, int]] = {}
    for tid in (path.name for path in Path(f"/proc/{pid}/task").iterdir()):
        try:
            fields = Path(f"/proc/{pid}/task/{tid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # the thread ended meanwhile
            continue
        times[int(tid)] = (int(fields[11]), int(fields[12]))
    return times


def split(pid: int, before: dict[int, tuple[int, int]], after: dict[int, tuple[int, int]], requests: int) -> dict[str, float]:
    """µs of CPU per request: the main thread, the calls' threads together, and the others (the outliers) together."""
    per_request = {tid: (sum(after[tid]) - sum(before.get(tid, (0, 0)))) / CLOCK_TICKS * 1e6 / requests for tid in after}
    main = per_request.pop(pid, 0.0)
    busy = [value for value in per_request.values() if value > 0]
    typical = statistics.median(busy) if busy else 0.0
    others = {tid: value for tid, value in per_request.items() if value > OUTLIER * typical}
    calls = [value for tid, value in per_request.items() if tid not in others]
    return {"main": main, "calls": sum(calls), "others": sum(others.values()), "total": main + sum(per_request.values())}


def measure(target: Target, sink: Sink, seconds: float, server_core: int | None, load_core: int | None, logs: Path) -> dict[str, float]:
    port = free_port()
    env = environment(target, port, None, sink.endpoint if target.tracing else None)
    server = start(resolve_command(target, port, Path()), env, target.cwd, port, logs / f"{target.name}.log", core=server_core, expect=EXPECTED_BODY)
    try:
        (worker,) = children(server.pid)
        run_wrk(port, server.pid, connections=16, seconds=2, core=load_core)  # warm-up; a batch or more exported
        before = thread_times(worker)
        load = run_wrk(port, server.pid, connections=16, seconds=seconds, core=load_core)
        after = thread_times(worker)
        return split(worker, before, after, load.requests)
    finally:
        server.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.thread_cpu", description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=5)
    args = parser.parse_args(argv)
    targets = {target.name: target for target in all_targets() if target.name in TARGETS}
    server_core, load_core = server_and_load_cores()
    sink = Sink(load_core)
    rows: dict[str, list[dict[str, float]]] = {name: [] for name in TARGETS}
    try:
        with tempfile.TemporaryDirectory(prefix="bench-threads-") as logs:
            for number in range(args.rounds):
                for name in TARGETS if number % 2 == 0 else TARGETS[::-1]:
                    rows[name].append(measure(targets[name], sink, args.seconds, server_core, load_core, Path(logs)))
        exports = sink.stats()["exports"]
    finally:
        sink.stop()
    print("| target | main thread (loop) | calls' threads | other threads | whole worker |")
    print("|---|---:|---:|---:|---:|")
    for name, samples in rows.items():
        cells = [f"{statistics.median(sample[key] for sample in samples):.1f}" for key in ("main", "calls", "others", "total")]
        print(f"| {name} | " + " | ".join(cells) + " |")
    print(f"µs of CPU per request, medians of {args.rounds} rounds of {args.seconds:g} s; the receiver got {exports} exports")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
