"""Cold starts alone: each target started as ``make bench`` starts it, interleaved, many times.

    python -m bench.cold_start
    python -m bench.cold_start --starts 9 bare-granian funcwsgi-granian

A start is the time from spawning the server to its first ``200`` on ``/``
(:func:`bench.processes.start`, pinned to the server's core as in the full
run). The targets are started one after another in each round, every other
round in reverse order, so that a change in the machine's load falls on all of
them alike; each funcwsgi target's ratio is the median of its rounds' ratios
to its bare server. Sources are byte-compiled first, as ``make bench`` does.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

from tests.support.ports import free_port

from .processes import server_and_load_cores, start
from .run import EXPECTED_BODY, compile_sources
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.cold_start", description=__doc__.splitlines()[0])
    parser.add_argument("targets", nargs="*", default=list(DEFAULT_TARGETS), help="target names as in the table (default: %(default)s)")
    parser.add_argument("--starts", type=int, default=7, help="starts of each target (default: %(default)s)")
    args = parser.parse_args(argv)
    known = {target.name: target for target in all_targets()}
    unknown = [name for name in args.targets if name not in known]
    if unknown:
        parser.error(f"unknown target(s) {', '.join(unknown)}; expected some of {', '.join(known)}")
    if args.starts < 1:
        parser.error(f"--starts {args.starts}: expected a positive number")
    compile_sources()
    targets = [known[name] for name in args.targets]
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
