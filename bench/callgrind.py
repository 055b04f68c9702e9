"""Instructions per call under callgrind: a cost that load on a shared machine cannot blur.

Each variant runs twice under ``valgrind --tool=callgrind``, with a small and a
large number of calls; the difference divided by the difference in calls is
the instructions one call costs, start-up and imports cancelled out::

    python -m bench.callgrind bare call-path stack
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FEW, MANY = 200, 1200
TOTALS = re.compile(rb"^(?:summary|totals):\s+(\d+)", re.MULTILINE)


def available() -> bool:
    return shutil.which("valgrind") is not None


def instructions(variant: str, calls: int, workdir: Path, trace_endpoint: str | None = None) -> int:
    out = workdir / f"callgrind.{variant}.{calls}"
    # The interpreter binary itself (a venv's python is a symlink to it, never a shell shim).
    command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable, "-m", "bench.inprocess", "--only", variant, "--calls", str(calls)]
    if trace_endpoint:
        command += ["--trace-endpoint", trace_endpoint]
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    result = subprocess.run(command, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=600)
    if result.returncode != 0:
        raise RuntimeError(f"callgrind run of {variant} failed: {result.stderr.decode(errors='replace')[-1500:]}")
    match = TOTALS.search(out.read_bytes())
    if match is None:
        raise RuntimeError(f"no totals in {out}")
    return int(match.group(1))


def per_call(variant: str, trace_endpoint: str | None = None) -> int:
    with tempfile.TemporaryDirectory(prefix="bench-callgrind-") as tmp:
        few = instructions(variant, FEW, Path(tmp), trace_endpoint)
        many = instructions(variant, MANY, Path(tmp), trace_endpoint)
    return round((many - few) / (MANY - FEW))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.callgrind", description=__doc__.splitlines()[0])
    parser.add_argument("variants", nargs="+", help="variant ids of bench.inprocess (bare, call-path, stack, ...)")
    args = parser.parse_args(argv)
    if not available():
        parser.error("valgrind is not installed (Debian package 'valgrind')")
    print(json.dumps({variant: per_call(variant) for variant in args.variants}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
