"""``make bench``: every target side by side, interleaved, with medians and ratios.

Each round starts every target in turn (A B C …, the Node targets side by
side, the next round in reverse order), times its cold start, warms it up (a
Node server until V8 has compiled its hot code), loads it with wrk at 16
connections and at 1, reads its CPU time and memory, and stops it. Medians
over the rounds are reported, and ratios are medians of the per-round
ratios, so drift on a shared machine cancels out as far as it can.

    python -m bench            # full run (< 10 min); writes docs/performance.md and its chart
    python -m bench --quick    # < 2 min; writes to .bench-cache/quick/ only
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tests.support.ports import free_port
from tests.support.processes import http_get

from . import callgrind, chart, figures, history, node_callgrind, report
from .environment import REPO, SetupError, alternatives_python, cache_dir, compile_sources, ensure_wrk, missing_modules, node_alternatives, node_binary
from .load import run_h2load, run_wrk
from .processes import ServerFailed, server_and_load_cores, start, worker_rss_mb
from .targets import NODE, Target, all_targets, environment, node_target_names

EXPECTED_BODY = b"Hello, world!"
RESULTS = REPO / "bench" / "results" / "results.json"
DOC = REPO / "docs" / "performance.md"
CHART = REPO / "docs" / "performance.svg"


@dataclass(frozen=True)
class Mode:
    name: str
    rounds: int
    seconds: float  # per wrk run
    warmup_seconds: int  # a wrk run at 16 connections before measuring; 0 = a few plain requests
    connections: tuple[int, ...]
    inprocess_rounds: int
    inprocess_calls: int
    callgrind: bool
    node_warmup_runs: int  # at most this many 1-s wrk runs to warm a Node target up (NODE_WARMUP_REQUESTS)


#: The in-process variants counted under callgrind in a full run (those the in-process run measured).
CALLGRIND_VARIANTS = ("bare", "call-path", "stack", "stack-handoff", "stack-tracing", "otel-floor", "otel-floor-attributes", "stack-flask-global", "stack-flask-request")
#: The event-loop path's (bench.inprocess.LOOP_VARIANTS): counted always, timed in-process only by `python -m bench.inprocess --loop`.
CALLGRIND_LOOP_VARIANTS = ("loop-bare", "loop-hello", "loop-io", "loop-io-gc700")

FULL = Mode("full", rounds=4, seconds=2, warmup_seconds=1, connections=(16, 1), inprocess_rounds=7, inprocess_calls=10000, callgrind=True, node_warmup_runs=4)
QUICK = Mode("quick", rounds=1, seconds=1, warmup_seconds=0, connections=(16, 1), inprocess_rounds=1, inprocess_calls=1000, callgrind=False, node_warmup_runs=1)


#: V8 compiles a Node server's code while it serves, so its CPU per request falls over its first tens of
#: thousands of calls (from about 2x the settled cost for Express, 1.5x for nodejs26 and node:http;
#: docs/performance.md), and the more slowly the more the machine is loaded. A Node target is warmed up
#: until it has answered this many requests, in 1-s runs of wrk, at most `Mode.node_warmup_runs` of them
#: (one in a quick run, whose figures only show that every target answers).
NODE_WARMUP_REQUESTS = 60_000


def log(message: str) -> None:
    print(f"bench: {message}", file=sys.stderr, flush=True)


def loadavg() -> list[float]:
    return [float(value) for value in Path("/proc/loadavg").read_text().split()[:3]]


def machine() -> dict[str, Any]:
    model = ""
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            model = line.split(":", 1)[1].strip()
            break
    wrk_version = subprocess.run(["wrk", "--version"], capture_output=True, text=True).stdout.split("[")[0].strip()
    return {
        "cpu": model,
        "cores": os.cpu_count(),
        "memory_gb": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "wrk": wrk_version,
    }


class Sink:
    """The stand-in OTLP receiver, on the load generator's core."""

    def __init__(self, core: int | None) -> None:
        self.port = free_port()
        command = [sys.executable, "-m", "bench.sink", str(self.port)]
        if core is not None:
            command = ["taskset", "-c", str(core), *command]
        self.process = subprocess.Popen(command, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                http_get("127.0.0.1", self.port, "/stats")
                return
            except OSError:
                time.sleep(0.02)
        raise SetupError("the OTLP stand-in receiver did not start")

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1/traces"

    def stats(self) -> dict[str, int]:
        return json.loads(http_get("127.0.0.1", self.port, "/stats")[1])  # type: ignore[no-any-return]

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


def run_inprocess(mode: Mode, core: int | None, trace_endpoint: str | None) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory(prefix="bench-inprocess-") as tmp:
        out = Path(tmp) / "inprocess.json"
        command = [sys.executable, "-m", "bench.inprocess", "--json", str(out), "--rounds", str(mode.inprocess_rounds), "--calls", str(mode.inprocess_calls)]
        if trace_endpoint:
            command += ["--trace-endpoint", trace_endpoint]
        if core is not None:
            command = ["taskset", "-c", str(core), *command]
        # Access logs go to stdout; discarding them costs what writing to a pipe would, roughly.
        result = subprocess.run(command, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=600)
        if result.returncode != 0:
            raise RuntimeError(f"in-process benchmark failed:\n{result.stderr[-2000:]}")
        return json.loads(out.read_text())  # type: ignore[no-any-return]


def run_node_inprocess(mode: Mode, core: int | None) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory(prefix="bench-node-inprocess-") as tmp:
        out = Path(tmp) / "inprocess.json"
        command = [str(node_binary()), str(REPO / "bench" / "node_inprocess.mjs"), "--json", str(out), "--rounds", str(mode.inprocess_rounds), "--calls", str(mode.inprocess_calls)]
        if core is not None:
            command = ["taskset", "-c", str(core), *command]
        result = subprocess.run(command, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=600)
        if result.returncode != 0:
            raise RuntimeError(f"in-process benchmark of nodejs26 failed:\n{result.stderr[-2000:]}")
        return json.loads(out.read_text())  # type: ignore[no-any-return]


def warm_up(port: int, pid: int, mode: Mode, load_core: int | None, *, node: bool = False) -> int | None:
    """Load the server before it is measured; a Node server's warm-up answers how many requests it took."""
    if node:
        served = 0
        for _ in range(mode.node_warmup_runs):
            served += run_wrk(port, pid, connections=16, seconds=1, core=load_core).requests
            if served >= NODE_WARMUP_REQUESTS:
                break
        return served
    if mode.warmup_seconds:
        run_wrk(port, pid, connections=16, seconds=mode.warmup_seconds, core=load_core)
    else:
        for _ in range(50):
            http_get("127.0.0.1", port)
    return None


def round_order(targets: list[Target], round_number: int) -> list[Target]:
    """The targets in the table's order with the Node ones side by side at the end; every other round reversed.

    A round takes minutes and the load of a shared machine moves meanwhile; side by side, the
    Node rows whose ratios are targets are measured seconds apart.
    """
    node = node_target_names()
    order = [t for t in targets if t.name not in node] + [t for t in targets if t.name in node]
    return order if round_number % 2 == 0 else order[::-1]


def resolve_command(target: Target, port: int, alternatives_bin: Path) -> list[str]:
    command = target.command(port)
    if target.alternative_env:  # the alternatives' own interpreter and scripts
        command = [str(alternatives_bin / command[0]), *command[1:]]
    if command[0] == NODE:
        command = [str(node_binary()), *command[1:]]
    return command


def run_round(target: Target, alternatives_bin: Path, trace_endpoint: str | None, mode: Mode, logs: Path, server_core: int | None, load_core: int | None) -> dict[str, Any]:
    port = free_port()
    command = resolve_command(target, port, alternatives_bin)
    env = environment(target, port, alternatives_bin, trace_endpoint)
    server = start(command, env, target.cwd, port, logs / f"{target.name}.log", core=server_core, expect=EXPECTED_BODY)
    try:
        warmed = warm_up(port, server.pid, mode, load_core, node=target.name in node_target_names())
        sample: dict[str, Any] = {"cold_start_ms": round(server.cold_start_ms, 1)}
        if warmed is not None:
            sample["warmup_requests"] = warmed
        load = run_h2load if target.http2 else run_wrk
        for connections in mode.connections:
            sample[f"c{connections}"] = load(port, server.pid, connections=connections, seconds=mode.seconds, core=load_core).as_dict()
        sample["rss_mb"] = round(worker_rss_mb(server.pid), 1)
        return sample
    finally:
        server.stop()


def median(values: list[float]) -> float | None:
    return round(statistics.median(values), 2) if values else None


def summarize(samples: list[dict[str, Any]], mode: Mode) -> dict[str, Any]:
    summary: dict[str, Any] = {"cold_start_ms": median([s["cold_start_ms"] for s in samples]), "rss_mb": median([s["rss_mb"] for s in samples])}
    for connections in mode.connections:
        key = f"c{connections}"
        runs = [s[key] for s in samples if key in s]
        summary[key] = {
            field: median([run[field] for run in runs]) for field in ("requests_per_s", "ok_per_s", "p50_us", "p99_us", "cpu_us_per_request", "system_us_per_request")
        }
        # A refusal is an answer, not a served call: a row with any non-2xx answer at these loads fails.
        summary[key]["other_answers"] = sum(run["other_answers"] for run in runs)
        summary[key]["errors"] = sum(run["errors"] for run in runs)
        summary[key]["requests"] = sum(run["requests"] for run in runs)
    return summary


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one short round, no callgrind (< 2 min); docs untouched")
    parser.add_argument("--out", type=Path, help="folder for results.json, the chart and the report (default: bench/results, or .bench-cache/quick with --quick)")
    parser.add_argument("--rounds", type=int, help="rounds of the interleaved HTTP runs")
    parser.add_argument("--seconds", type=int, help="seconds per wrk run (whole seconds, at least 1)")
    parser.add_argument("--connections", type=int, nargs="+", metavar="N", help="the loads to run, in connections (default: 16 and 1)")
    parser.add_argument("--only", nargs="+", metavar="TARGET", help="run only these targets (names as in the table)")
    parser.add_argument("--no-inprocess", action="store_true", help="skip the in-process and callgrind measurements")
    parser.add_argument("--no-docs", action="store_true", help="do not rewrite docs/performance.md and its chart")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    mode = QUICK if args.quick else FULL
    if args.rounds or args.seconds or args.connections:
        mode = Mode(**{
            **mode.__dict__,
            "rounds": args.rounds or mode.rounds,
            "seconds": args.seconds or mode.seconds,
            "connections": tuple(args.connections or mode.connections),
        })
    out = args.out or (cache_dir() / "quick" if args.quick else RESULTS.parent)
    out.mkdir(parents=True, exist_ok=True)
    began = time.monotonic()
    try:
        ensure_wrk()
        alternatives_bin = alternatives_python().parent
        compile_sources()
        node_binary()
        node_alternatives()
    except SetupError as error:
        print(f"bench: error: {error}", file=sys.stderr)
        return 2
    server_core, load_core = server_and_load_cores()
    targets = all_targets()
    if args.only:
        unknown = set(args.only) - {t.name for t in targets}
        if unknown:
            print(f"bench: error: unknown target(s) {', '.join(sorted(unknown))}; known: {', '.join(t.name for t in targets)}", file=sys.stderr)
            return 2
        targets = [t for t in targets if t.name in args.only]

    results: dict[str, Any] = {
        "meta": {
            "mode": mode.__dict__,
            "started": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "machine": machine(),
            "loadavg_before": loadavg(),
            "pinning": {"server_core": server_core, "load_core": load_core},
            "command": " ".join(["python -m bench", *(sys.argv[1:] if argv is None else argv)]),
        },
        "targets": [],
    }
    state: dict[str, dict[str, Any]] = {}
    runnable: list[Target] = []
    for target in targets:
        entry: dict[str, Any] = {
            "name": target.name,
            "label": target.label,
            "group": target.group,
            "baseline": target.baseline,
            "http2": target.http2,
            "command": target.display_command(),
            "samples": [],
            "failures": [],
        }
        state[target.name] = entry
        results["targets"].append(entry)
        lacking = [] if target.alternative_env else missing_modules(list(target.needs))
        if lacking:
            entry["failures"].append(f"not installed in the project's environment: {', '.join(lacking)}")
            log(f"{target.name}: skipped, {entry['failures'][-1]}")
            continue
        runnable.append(target)

    sink = Sink(load_core) if any(t.tracing for t in runnable) or not args.no_inprocess else None
    logs = Path(tempfile.mkdtemp(prefix="bench-logs-"))
    failed = False
    try:
        if not args.no_inprocess:
            log("in-process: µs per request, layer by layer")
            results["inprocess"] = run_inprocess(mode, server_core, sink.endpoint if sink else None)
            log("in-process: the nodejs26 call path")
            results["inprocess_node"] = run_node_inprocess(mode, server_core)
            if mode.callgrind and callgrind.available():
                log("callgrind: instructions per request")
                ids = [row["id"] for row in results["inprocess"]]
                chosen = [key for key in CALLGRIND_VARIANTS if key in ids] + list(CALLGRIND_LOOP_VARIANTS)
                counts = {key: callgrind.counted(key, sink.endpoint if sink else None) for key in chosen}
                results["callgrind"] = {key: count for key, (count, _) in counts.items()}
                results["callgrind_loop"] = {key: how for key, (_, how) in counts.items() if how is not None}
                node_names = tuple(name for name in node_callgrind.TARGETS if name in {target.name for target in runnable})
                if node_names:
                    log("callgrind: instructions per request of the Node servers over HTTP")
                    results["node_callgrind"] = node_callgrind.count_all(node_names, server_core, load_core)
        for round_number in range(mode.rounds):
            for target in round_order(runnable, round_number):
                entry = state[target.name]
                log(f"round {round_number + 1}/{mode.rounds}: {target.name}")
                try:
                    sample = run_round(target, alternatives_bin, sink.endpoint if sink else None, mode, logs, server_core, load_core)
                except (ServerFailed, RuntimeError, OSError) as error:
                    entry["failures"].append(f"round {round_number + 1}: {error}")
                    log(f"{target.name}: FAILED: {error}")
                    continue
                sample["round"] = round_number + 1
                entry["samples"].append(sample)
        if sink is not None:
            results["meta"]["trace_exports"] = sink.stats()
    finally:
        if sink is not None:
            sink.stop()
    for entry in results["targets"]:
        if entry["samples"]:
            entry["summary"] = summarize(entry["samples"], mode)
        errors = sum(entry["summary"][f"c{c}"]["errors"] for c in mode.connections) if entry["samples"] else 0
        entry["ok"] = bool(entry["samples"]) and not entry["failures"] and errors == 0
        failed = failed or not entry["ok"]
    results["meta"]["loadavg_after"] = loadavg()
    results["meta"]["elapsed_s"] = round(time.monotonic() - began, 1)
    results["checks"] = report.checks(results)

    (out / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    (out / "performance.svg").write_text(chart.render(results))
    generated = report.render(results, chart_path="performance.svg")
    (out / "report.md").write_text(generated)
    if not args.quick and not args.no_docs and not args.only:
        CHART.write_text(chart.render(results))
        report.update_doc(DOC, report.render(results, chart_path=CHART.name))
        history.record(results)
        history.update_doc(DOC, history.render(history.runs(history.load(), results), results["meta"]["started"]))
        quoted = figures.update_pages(REPO, results)
        log(f"updated {DOC.relative_to(REPO)}, {CHART.relative_to(REPO)} and the figures quoted in {', '.join(quoted) or 'no other page'}")
    print(report.summary_table(results))
    log(f"results in {out} ({results['meta']['elapsed_s']} s)")
    if failed:
        log(f"some targets failed (see 'failures' in results.json); server logs kept in {logs}")
    else:
        for path in logs.iterdir():
            path.unlink()
        logs.rmdir()
    return 1 if failed else 0
