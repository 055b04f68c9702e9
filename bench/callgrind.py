"""Instructions per call under callgrind: a cost that load on a shared machine cannot blur.

Each variant runs twice under ``valgrind --tool=callgrind``, with a small and a
large number of calls; the difference divided by the difference in calls is
the instructions one call costs, start-up and imports cancelled out::

    python -m bench.callgrind bare call-path stack
    python -m bench.callgrind loop-bare loop-hello loop-io loop-io-gc700

The event-loop variants (``loop-*``) run more calls: work done per loop
iteration or per collector pass rather than per call averages out only over
thousands of calls.

With ``--no-gc`` the counted calls run with the collector off (collected once
after the warm-up): a collection of the whole heap costs millions of
instructions, and where one falls moves with every allocation a change adds
or removes, so two counts of a small change differ by more than the change.
Off, the count is the change's own instructions::

    python -m bench.callgrind --no-gc stack stack-handoff
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
FEW, MANY = 200, 1200
#: Multiples of every loop variant's calls in flight, so each run ends with all of them busy to the last wave.
LOOP_FEW, LOOP_MANY = 800, 4000
#: Runs of each call count of a loop variant, the median kept (see counted()).
LOOP_REPEATS = 3
#: The variants that export spans: the command line starts the stand-in receiver (bench/sink.py) for them.
TRACED = frozenset({"stack-tracing", "otel-floor", "otel-floor-attributes"})
TOTALS = re.compile(rb"^(?:summary|totals):\s+(\d+)", re.MULTILINE)


def available() -> bool:
    return shutil.which("valgrind") is not None


def counted_run(module_args: list[str], out: Path, what: str, timeout: float = 600) -> int:
    """Instructions of one ``python -m`` run under callgrind, its profile written to ``out``."""
    # The interpreter binary itself (a venv's python is a symlink to it, never a shell shim).
    command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable, "-m", *module_args]
    # Spans leave when 512 are batched and at exit, never on the batch processor's clock: under callgrind a
    # run takes fifty times as long, and exports of part-filled batches every 5 s would move the count with
    # the machine's load (tens of thousands of instructions per call between two runs).
    env = {**os.environ, "PYTHONHASHSEED": "0", "OTEL_BSP_SCHEDULE_DELAY": "3600000"}
    result = subprocess.run(command, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=timeout)
    if result.returncode != 0:
        raise RuntimeError(f"callgrind run of {what} failed: {result.stderr.decode(errors='replace')[-1500:]}")
    return total_instructions(out.read_bytes(), str(out))


def total_instructions(profile: bytes, what: str) -> int:
    """The instructions a callgrind profile (or dump) counted in all."""
    match = TOTALS.search(profile)
    if match is None:
        raise RuntimeError(f"no totals in {what}")
    return int(match.group(1))


def instructions(
    variant: str, calls: int, workdir: Path, trace_endpoint: str | None = None, describe: Path | None = None, no_gc: bool = False
) -> int:
    module_args = ["bench.inprocess", "--only", variant, "--calls", str(calls)]
    if no_gc:
        module_args.append("--no-gc")
    if trace_endpoint:
        module_args += ["--trace-endpoint", trace_endpoint]
    if describe is not None:
        module_args += ["--describe", str(describe)]
    return counted_run(module_args, workdir / f"callgrind.{variant}.{calls}", variant)


def is_loop(variant: str) -> bool:
    return variant.startswith("loop-")


def calls_for(variant: str) -> tuple[int, int]:
    """The small and the large number of calls ``variant`` is run with."""
    return (LOOP_FEW, LOOP_MANY) if is_loop(variant) else (FEW, MANY)


def counted(variant: str, trace_endpoint: str | None = None, no_gc: bool = False) -> tuple[int, dict[str, Any] | None]:
    """Instructions per call and, for a loop variant, how it ran: its label, calls in flight and collector thresholds, and the call counts."""
    few_calls, many_calls = calls_for(variant)
    repeats = LOOP_REPEATS if is_loop(variant) else 1
    with tempfile.TemporaryDirectory(prefix="bench-callgrind-") as tmp:

        def run(calls: int, number: int) -> int:
            folder = Path(tmp) / f"{calls}.{number}"
            folder.mkdir()
            # Every run writes the description (the same few instructions in each), so it cancels out of the difference.
            return instructions(variant, calls, folder, trace_endpoint, folder / "described.json" if is_loop(variant) else None, no_gc)

        # Side by side, one per core: an instruction count does not depend on what else runs (only a loop's timers do: below).
        with ThreadPoolExecutor(max_workers=2) as pool:
            runs = {calls: [pool.submit(run, calls, number) for number in range(repeats)] for calls in (few_calls, many_calls)}
            # A loop variant's timers go by the clock: when the machine is busy its sleeps end in other batches,
            # which can bring a collection more or one less than a quiet run has. The median run of each count
            # leaves such a run out.
            few, many = (statistics.median_low(future.result() for future in runs[calls]) for calls in (few_calls, many_calls))
        how = None
        if is_loop(variant):
            how = {**json.loads((Path(tmp) / f"{many_calls}.0" / "described.json").read_text()), "calls": [few_calls, many_calls], "runs_each": repeats}
    return round((many - few) / (many_calls - few_calls)), how


def per_call(variant: str, trace_endpoint: str | None = None, no_gc: bool = False) -> int:
    return counted(variant, trace_endpoint, no_gc)[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.callgrind", description=__doc__.splitlines()[0])
    parser.add_argument(
        "variants", nargs="+", help="variant ids of bench.inprocess (bare, call-path, stack, ..., loop-bare, loop-hello, loop-io, loop-io-gc700)"
    )
    parser.add_argument(
        "--no-gc",
        action="store_true",
        help="count with the collector off (WSGI variants): a change's own instructions, without the collections its allocations move",
    )
    args = parser.parse_args(argv)
    if not available():
        parser.error("valgrind is not installed (Debian package 'valgrind')")
    sink = None
    if TRACED.intersection(args.variants):
        from .run import Sink

        sink = Sink(None)
    try:
        endpoint = sink.endpoint if sink else None
        print(json.dumps({variant: per_call(variant, endpoint, no_gc=args.no_gc) for variant in args.variants}, indent=2))
    finally:
        if sink is not None:
            sink.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
