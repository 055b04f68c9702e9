"""What a cold start spends on imports, in instructions: a figure the machine's load cannot move.

    python -m bench.import_cost

Each step runs under callgrind in a fresh interpreter that imports what the
steps before it imported and then its own modules, so the difference between
two steps is what the later one's imports (and the work named) cost. The
first step is what bare gunicorn imports to serve a WSGI app on gthread; the
others are what ``funcwsgi serve`` on gunicorn adds to it, in the order it
does them. Sources are byte-compiled first, as an installed package's are.
With ``--repo`` naming another checkout, its ``funcwsgi`` is counted.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from .callgrind import REPO, available, total_instructions
from .environment import compile_sources

HELLO = REPO / "bench" / "apps" / "hello"
#: (name, the Python a step adds to the ones before it).
STEPS: tuple[tuple[str, str], ...] = (
    ("interpreter", "pass"),
    ("bare gunicorn (arbiter, gthread worker, its config)", "import gunicorn.app.wsgiapp, gunicorn.arbiter, gunicorn.workers.gthread, gunicorn.glogging"),
    # werkzeug is not a step: a plain function's start never imports it (funcwsgi/request.py), its first read of `req` does.
    ("the funcwsgi package (settings, request path, stack, logging)", "import funcwsgi"),
    # `serve` alone builds no parser (funcwsgi/cli/__init__.py): the CLI's package and the command's module.
    ("funcwsgi's CLI running `serve`", "import funcwsgi.cli, funcwsgi.cli.commands.serve"),
    (
        "the function loaded and the stack built (funcwsgi:app)",
        f"import os; os.environ['HANDLER_FOLDER'] = {str(HELLO)!r}; import funcwsgi; funcwsgi.app",
    ),
    ("the edge worker's event loop: asyncio and uvloop", "import asyncio, uvloop"),
    ("the edge worker's parser: httptools (llhttp)", "import httptools"),
    ("the gunicorn adapter and funcwsgi's edge worker", "import funcwsgi.adapters.gunicorn, funcwsgi.adapters.gunicorn.worker"),
)


def count(code: str, workdir: Path, name: str, repo: Path = REPO) -> int:
    import os
    import subprocess

    out = workdir / f"callgrind.{name}"
    command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable, "-c", code]
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    result = subprocess.run(command, cwd=repo, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=600)
    if result.returncode != 0:
        raise RuntimeError(f"callgrind run of {name} failed: {result.stderr.decode(errors='replace')[-1500:]}")
    return total_instructions(out.read_bytes(), str(out))


def measure(repo: Path = REPO) -> list[dict[str, object]]:
    compile_sources(repo)
    rows: list[dict[str, object]] = []
    code = ""
    before = 0
    with tempfile.TemporaryDirectory(prefix="bench-imports-") as tmp:
        for number, (name, step) in enumerate(STEPS):
            code = f"{code}\n{step}" if code else step
            total = count(code, Path(tmp), str(number), repo)
            rows.append({"step": name, "instructions": total, "added": total - before if number else total})
            before = total
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.import_cost", description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="also write the rows here")
    parser.add_argument("--repo", type=Path, default=REPO, help="the checkout whose funcwsgi is counted (default: this one)")
    args = parser.parse_args(argv)
    if not available():
        parser.error("valgrind is not installed (Debian package 'valgrind')")
    rows = measure(args.repo.resolve())
    print("| step | instructions added | in all |\n|---|---:|---:|")
    for row in rows:
        print(f"| {row['step']} | {row['added']:,} | {row['instructions']:,} |")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
