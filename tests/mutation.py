"""Mutation testing of the core modules with cosmic-ray: does each module's test file see its behaviour break?

    python -m tests.mutation                  # what `make mutation` runs: every target below
    python -m tests.mutation timeout metrics  # some targets
    python -m tests.mutation --minutes 30     # stop starting mutants after 30 minutes (a rerun resumes)

For each target, cosmic-ray makes every mutant of the target's modules (an
operator swapped, a comparison turned round, a constant changed, a ``break``
made ``continue``...) and runs the target's tests against each; a mutant
the tests still pass on *survived*. The mutants are made in a copy of the
checkout under ``build/mutation/tree`` (cosmic-ray edits the file on disk,
so the real servers the tests start run the mutant too), with that copy
first on ``PYTHONPATH``. Each target's session (``build/mutation/NAME.sqlite``)
keeps what was run, so a run that stopped resumes where it stopped; a
target whose modules or tests changed since starts afresh.
``build/mutation/survivors.md`` lists every survivor with its diff.
docs/reliability.md says, for each survivor, why it is harmless or which
test was added. Not part of ``make test``: a full run takes about an hour.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
#: Where the copy and the sessions live; FUNCWSGI_MUTATION_DIR runs a second session set elsewhere.
WORK = Path(os.environ.get("FUNCWSGI_MUTATION_DIR") or REPO / "build" / "mutation")
TREE = WORK / "tree"


@dataclass(frozen=True)
class Target:
    name: str
    modules: tuple[str, ...]
    tests: tuple[str, ...]


# Quickest first, so that a run stopped by --minutes has covered the most targets.
TARGETS = (
    Target("request-id", ("funcwsgi/middleware/request_id.py",), ("tests/middleware/test_request_id.py",)),
    Target("errors", ("funcwsgi/middleware/server_errors.py",), ("tests/middleware/test_server_errors.py",)),
    Target("body-limit", ("funcwsgi/middleware/body_limit.py",), ("tests/middleware/test_body_limit.py",)),
    Target("response", ("funcwsgi/response.py", "funcwsgi/replies.py"), ("tests/test_response.py", "tests/test_replies.py")),
    Target(
        "cloudevents",
        ("funcwsgi/middleware/cloudevent_decoding.py", "funcwsgi/cloudevents.py"),
        ("tests/middleware/test_cloudevent_decoding.py", "tests/test_cloudevents.py"),
    ),
    Target(
        "timeout",
        ("funcwsgi/middleware/timeout.py", "funcwsgi/timeouts/__init__.py", "funcwsgi/timeouts/handoff.py", "funcwsgi/timeouts/watchdog.py"),
        ("tests/middleware/test_timeout.py", "tests/timeouts/test_handoff.py", "tests/timeouts/test_watchdog.py"),
    ),
    Target(
        "metrics",
        ("funcwsgi/middleware/call_metrics.py", "funcwsgi/metrics/calls.py", "funcwsgi/metrics/multiprocess.py", "funcwsgi/metrics/endpoint.py", "funcwsgi/metrics/port.py"),
        ("tests/middleware/test_call_metrics.py", "tests/metrics/test_calls.py", "tests/metrics/test_endpoint.py", "tests/metrics/test_multiprocess.py"),
    ),
)

# Operator families left out: mostly equivalent or absurd for this code (an ``a + b`` of two
# strings turned into ``a ** b`` or ``a >> b``), and together over half of all mutants.
# One arithmetic replacement of each kind, every comparison, boolean, constant and
# keyword mutation stay.
EXCLUDED_OPERATORS = (
    r"core/ReplaceBinaryOperator_.*_(Pow|RShift|LShift|BitOr|BitAnd|BitXor|FloorDiv|Mod)$",
    r"core/ReplaceBinaryOperator_(Pow|RShift|LShift|BitOr|BitAnd|BitXor|FloorDiv|Mod)_.*",
    r"core/ReplaceUnaryOperator_.*",
)


def copy_checkout() -> None:
    """The files git knows (committed or not, untracked included unless ignored), copied to TREE."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO, capture_output=True, check=True
    ).stdout.split(b"\0")
    shutil.rmtree(TREE, ignore_errors=True)
    for name in filter(None, listed):
        source = REPO / name.decode()
        if source.is_file():
            target = TREE / name.decode()
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)


def fingerprint(target: Target) -> str:
    digest = hashlib.sha256()
    for name in (*target.modules, *target.tests):
        digest.update(name.encode() + b"\0" + (REPO / name).read_bytes())
    return digest.hexdigest()[:16]


def config_text(target: Target, timeout: float) -> str:
    tests = " ".join(target.tests)
    command = f"{sys.executable} -m pytest -x -q -p no:cacheprovider {tests}"
    return "\n".join(
        [
            "[cosmic-ray]",
            f"module-path = {json.dumps(list(target.modules))}",
            f"timeout = {timeout:.0f}",
            "excluded-modules = []",
            f"test-command = {json.dumps(command)}",
            "",
            "[cosmic-ray.distributor]",
            'name = "local"',
            "",
            "[cosmic-ray.filters.operators-filter]",
            f"exclude-operators = {json.dumps(list(EXCLUDED_OPERATORS))}",
            "",
        ]
    )


def tool(name: str) -> str:
    return str(Path(sys.executable).parent / name)


def environment() -> dict[str, str]:
    # The copy first: the tests and the servers they start import the mutated funcwsgi.
    return {**os.environ, "PYTHONPATH": str(TREE), "PYTHONDONTWRITEBYTECODE": "1"}


def baseline_seconds(target: Target) -> float:
    began = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *target.tests], cwd=TREE, env=environment(), capture_output=True, text=True
    )
    if result.returncode != 0:
        raise SystemExit(f"mutation: the tests of {target.name} fail without a mutant:\n{result.stdout[-3000:]}")
    return time.monotonic() - began


def prepare(target: Target) -> tuple[Path, Path]:
    """The target's config and session, made afresh when its modules or tests changed."""
    config, session, stamp = WORK / f"{target.name}.toml", WORK / f"{target.name}.sqlite", WORK / f"{target.name}.fingerprint"
    current = fingerprint(target)
    if session.exists() and stamp.exists() and stamp.read_text() == current:
        return config, session
    session.unlink(missing_ok=True)
    seconds = baseline_seconds(target)
    # A mutant that makes the tests hang (a deadline never reached) is killed: it counts as caught.
    config.write_text(config_text(target, timeout=max(30.0, 4 * seconds)))
    subprocess.run([tool("cosmic-ray"), "init", str(config), str(session)], cwd=TREE, env=environment(), check=True)
    subprocess.run([tool("cr-filter-operators"), str(session), str(config)], cwd=TREE, env=environment(), check=True)
    subprocess.run([tool("cr-filter-pragma"), str(session)], cwd=TREE, env=environment(), check=True)
    stamp.write_text(current)
    print(f"mutation: {target.name}: tests take {seconds:.1f} s unmutated", flush=True)
    return config, session


def results(session: Path) -> list[dict[str, object]]:
    dumped = subprocess.run([tool("cosmic-ray"), "dump", str(session)], cwd=TREE, env=environment(), capture_output=True, text=True, check=True)
    found = []
    for line in dumped.stdout.splitlines():
        item, result = json.loads(line)
        found.append({"item": item, "result": result})
    return found


def summary(target: Target, session: Path) -> tuple[dict[str, int], list[str]]:
    counts: dict[str, int] = {"killed": 0, "survived": 0, "incompetent": 0, "skipped": 0, "pending": 0}
    survivors = []
    for entry in results(session):
        result = entry["result"]
        if result is None:
            counts["pending"] += 1
            continue
        assert isinstance(result, dict)
        if result.get("worker_outcome") == "skipped":
            counts["skipped"] += 1
            continue
        outcome = result.get("test_outcome")
        counts[str(outcome)] = counts.get(str(outcome), 0) + 1
        if outcome == "survived":
            item = entry["item"]
            assert isinstance(item, dict)
            for mutation in item["mutations"]:
                start = mutation["start_pos"]
                survivors.append(f"{mutation['module_path']}:{start[0]} {mutation['operator_name']} #{mutation['occurrence']}\n{result.get('diff', '')}")
    return counts, survivors


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.mutation", description=__doc__.split("\n\n")[0])
    parser.add_argument("targets", nargs="*", help=f"targets to run (default: all): {', '.join(t.name for t in TARGETS)}")
    parser.add_argument("--minutes", type=float, default=75.0, help="stop starting new targets after this long; a rerun resumes")
    parser.add_argument("--report-only", action="store_true", help="only list what the sessions hold")
    args = parser.parse_args(argv)
    known = {target.name: target for target in TARGETS}
    unknown = [name for name in args.targets if name not in known]
    if unknown:
        parser.error(f"unknown target(s) {', '.join(unknown)}; known: {', '.join(known)}")
    chosen = [known[name] for name in args.targets] if args.targets else list(TARGETS)
    WORK.mkdir(parents=True, exist_ok=True)
    if not args.report_only:
        copy_checkout()
    began = time.monotonic()
    report = ["# Surviving mutants", ""]
    for target in chosen:
        session = WORK / f"{target.name}.sqlite"
        if not args.report_only:
            left = args.minutes * 60 - (time.monotonic() - began)
            if left <= 0:
                print(f"mutation: {target.name}: not started, out of time", flush=True)
            else:
                config, session = prepare(target)
                try:
                    subprocess.run([tool("cosmic-ray"), "exec", str(config), str(session)], cwd=TREE, env=environment(), timeout=left)
                except subprocess.TimeoutExpired:
                    print(f"mutation: {target.name}: stopped at the time limit; a rerun resumes", flush=True)
        if not session.exists():
            continue
        counts, survivors = summary(target, session)
        line = ", ".join(f"{count} {what}" for what, count in counts.items() if count)
        print(f"mutation: {target.name}: {line}", flush=True)
        report += [f"## {target.name}: {line}", "", *(f"```\n{survivor}\n```\n" for survivor in survivors)]
    (WORK / "survivors.md").write_text("\n".join(report) + "\n")
    print(f"mutation: survivors listed in {WORK / 'survivors.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
