"""Cold starts alone: each target started as ``make bench`` starts it, interleaved, many times.

    python -m bench.cold_start
    python -m bench.cold_start --starts 9 bare-granian funcwsgi-granian
    python -m bench.cold_start --instructions bare-gunicorn-gthread funcwsgi-gunicorn

A start is the time from spawning the server to its first ``200`` on ``/``
(:func:`bench.processes.start`, pinned to the server's core as in the full
run). The targets are started one after another in each round, every other
round in reverse order, so that a change in the machine's load falls on all of
them alike; each funcwsgi target's ratio is the median of its rounds' ratios
to its bare server. Sources are byte-compiled first, as ``make bench`` does.

``--instructions`` counts a start instead of timing it, a figure the machine's
load cannot move: each target once under callgrind, following its children,
until its first ``200``; a forked worker's counters start from its master's
at the fork, so the worker's count then is everything on the way to that
answer (the master's start-up, then the worker's own) and nothing the master
did after the fork. For servers that fork their workers (gunicorn).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.support.ports import free_port
from tests.support.processes import children, http_get

from .callgrind import available, total_instructions
from .environment import compile_sources
from .processes import server_and_load_cores, start
from .run import EXPECTED_BODY
from .targets import Target, all_targets, environment

#: The default pairs: funcwsgi on gunicorn and on granian, each with its bare server.
DEFAULT_TARGETS = ("bare-gunicorn-gthread", "funcwsgi-gunicorn", "bare-granian", "funcwsgi-granian")


def started_ms(target: Target, logs: Path, core: int | None) -> float:
    port = free_port()
    server = start(target.command(port), environment(target, port, None, None), target.cwd, port, logs / f"{target.name}.log", core=core, expect=EXPECTED_BODY)
    server.stop()
    return server.cold_start_ms


def measure(targets: list[Target], starts: int) -> dict[str, list[float]]:
    core, _ = server_and_load_cores()
    found: dict[str, list[float]] = {target.name: [] for target in targets}
    with tempfile.TemporaryDirectory(prefix="bench-cold-") as tmp:
        for target in targets:  # one start each first: the page cache warm for every one alike
            started_ms(target, Path(tmp), core)
        for number in range(starts):
            for target in targets if number % 2 == 0 else targets[::-1]:
                found[target.name].append(started_ms(target, Path(tmp), core))
    return found


def on_the_way(dumps: dict[int, Path], workers: list[int]) -> int:
    """The instructions of the start's answering path: the dump of the (first) worker, else of the only process."""
    chosen = next((pid for pid in workers if pid in dumps), None)
    if chosen is None:
        if len(dumps) != 1:
            raise RuntimeError(f"no worker's count among the processes {sorted(dumps)}")
        chosen = next(iter(dumps))
    return total_instructions(dumps[chosen].read_bytes(), str(dumps[chosen]))


def started_instructions(target: Target, workdir: Path, timeout: float = 300) -> int:
    """Instructions from spawning ``target`` under callgrind to its first 200, on the way to that answer."""
    port = free_port()
    folder = workdir / target.name
    folder.mkdir()
    command = ["valgrind", "--tool=callgrind", "--trace-children=yes", f"--callgrind-out-file={folder}/callgrind.%p", *target.command(port)]
    env = {**environment(target, port, None, None), "PYTHONHASHSEED": "0"}
    process = subprocess.Popen(command, env=env, cwd=str(target.cwd), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise RuntimeError(f"{target.name} exited with status {process.returncode} under callgrind")
            try:
                if http_get("127.0.0.1", port)[0] == 200:
                    break
            except OSError:
                pass
            time.sleep(0.02)
        else:
            raise RuntimeError(f"{target.name} did not answer 200 within {timeout:.0f} s under callgrind")
        workers = children(process.pid)
        subprocess.run(["callgrind_control", "--dump", str(process.pid), *map(str, workers)], capture_output=True, timeout=60)
        dumps: dict[int, Path] = {}
        for _ in range(100):  # the dumps are written as each process next runs
            dumps = {int(path.name.split(".")[1]): path for path in folder.glob("callgrind.*.1")}
            if set(dumps) >= {process.pid, *workers}:
                break
            time.sleep(0.1)
        return on_the_way(dumps, workers)
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def count_starts(targets: list[Target]) -> list[dict[str, object]]:
    found: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="bench-cold-instructions-") as tmp:
        for target in targets:
            found[target.name] = started_instructions(target, Path(tmp))
    rows: list[dict[str, object]] = []
    for target in targets:
        row: dict[str, object] = {"target": target.name, "instructions": found[target.name]}
        if target.baseline in found:
            row["over"] = target.baseline
            row["ratio"] = round(found[target.name] / found[target.baseline], 3)
        rows.append(row)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.cold_start", description=__doc__.splitlines()[0])
    parser.add_argument("targets", nargs="*", default=list(DEFAULT_TARGETS), help="target names as in the table (default: %(default)s)")
    parser.add_argument("--starts", type=int, default=7, help="starts of each target (default: %(default)s)")
    parser.add_argument("--instructions", action="store_true", help="count one start of each under callgrind instead of timing them")
    args = parser.parse_args(argv)
    known = {target.name: target for target in all_targets()}
    unknown = [name for name in args.targets if name not in known]
    if unknown:
        parser.error(f"unknown target(s) {', '.join(unknown)}; expected some of {', '.join(known)}")
    if args.starts < 1:
        parser.error(f"--starts {args.starts}: expected a positive number")
    compile_sources()
    targets = [known[name] for name in args.targets]
    if args.instructions:
        if not available():
            parser.error("valgrind is not installed (Debian package 'valgrind')")
        print(json.dumps(count_starts(targets), indent=2))
        return 0
    found = measure(targets, args.starts)
    rows = []
    for target in targets:
        row: dict[str, object] = {"target": target.name, "median_ms": round(statistics.median(found[target.name]), 1), "starts_ms": [round(ms, 1) for ms in found[target.name]]}
        if target.baseline in found:
            ratios = [mine / bare for mine, bare in zip(found[target.name], found[target.baseline], strict=True)]
            row["over"] = target.baseline
            row["ratio"] = round(statistics.median(ratios), 2)
        rows.append(row)
    print(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
