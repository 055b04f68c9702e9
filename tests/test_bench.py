"""The benchmark harness (bench/): its quick mode really starts and loads every target.

The benchmark itself is not run in CI (too slow, too noisy to judge); this
smoke test only proves that every target starts and answers 200 under wrk,
so the harness cannot rot unnoticed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from bench import report
from bench.targets import all_targets

from .support.paths import REPO

#: The last full run on the workers issue 42 replaced, kept on docs/performance.md as "before".
BEFORE_EDGE_WORKER = REPO / "bench" / "results" / "before-edge-worker.json"


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    finished = subprocess.run(
        # One load of 16 connections: what a target answers is the point here, and every wrk run keeps both
        # cores busy for its second, beside phase 1's other tests (the load of 1 is the same code, run by hand).
        [sys.executable, "-m", "bench", "--quick", "--connections", "16", "--out", str(out), "--no-docs"],
        cwd=REPO,
        capture_output=True,
        text=True,
        # A guard against a hang, not a speed check: about 50 s alone, more beside phase 1's other tests.
        timeout=600,
    )
    return finished, out


@pytest.mark.slow("python -m bench --quick: starts each of the 24 targets in turn and loads it with wrk for a second")
def test_quick_mode_starts_every_target_and_gets_200s(quick_run):
    finished, out = quick_run
    assert finished.returncode == 0, finished.stderr[-4000:]
    results = json.loads((out / "results.json").read_text())
    assert [entry["name"] for entry in results["targets"]] == [target.name for target in all_targets()]
    for entry in results["targets"]:
        assert entry["ok"], (entry["name"], entry["failures"])
        summary = entry["summary"]
        assert "c1" not in summary, entry["name"]  # --connections 16 ran that load alone
        load = summary["c16"]
        assert load["requests"] > 0 and load["errors"] == 0, (entry["name"], load)
        assert load["cpu_us_per_request"] > 0, entry["name"]
        assert 0 <= load["system_us_per_request"] <= load["cpu_us_per_request"], (entry["name"], load)
        assert summary["cold_start_ms"] > 0 and summary["rss_mb"] > 0, entry["name"]


@pytest.mark.slow("python -m bench --quick: starts each of the 24 targets in turn and loads it with wrk for a second")
def test_quick_mode_reports_layers_checks_and_a_chart(quick_run):
    _, out = quick_run
    results = json.loads((out / "results.json").read_text())
    ids = [row["id"] for row in results["inprocess"]]
    assert ids[:2] == ["bare", "werkzeug"] and "call-path" in ids and ids[-1] in ("stack", "stack-tracing")
    assert {check["check"] for check in results["checks"]} >= {
        "in-process: call path over bare WSGI (CPU)",
        "req/s: funcwsgi ÷ Functions Framework",
        "cold start: funcwsgi ÷ bare gunicorn",
    }
    svg = (out / "performance.svg").read_text()
    assert svg.startswith("<svg") and all(entry["label"] in svg for entry in results["targets"])
    markdown = (out / "report.md").read_text()
    assert markdown.startswith(report.BEGIN) and "| target | 2xx/s @16 |" in markdown


def test_ratios_pair_samples_of_the_same_round():
    def target(name, rates):
        samples = [{"round": number, "c16": {"requests_per_s": rate}} for number, rate in rates]
        return {"name": name, "samples": samples}

    # Round 2 of "b" is missing: only rounds 1 and 3 pair up (2.0 and 4.0 → median 3.0).
    results = {"targets": [target("a", [(1, 200), (2, 900), (3, 400)]), target("b", [(1, 100), (3, 100)])]}
    assert report.paired(results, "a", "b", "c16.requests_per_s") == 3.0
    assert report.paired(results, "a", "b", "c16.requests_per_s", ratio=False) == 200.0
    assert report.paired(results, "a", "missing", "c16.requests_per_s") is None


def test_the_generated_part_replaces_only_the_text_between_the_markers(tmp_path):
    page = tmp_path / "performance.md"
    page.write_text(f"# Intro\n\n{report.BEGIN}\nold numbers\n{report.END}\n\n## Written by hand\n")
    report.update_doc(page, f"{report.BEGIN}\nnew numbers\n{report.END}\n")
    assert page.read_text() == f"# Intro\n\n{report.BEGIN}\nnew numbers\n{report.END}\n\n## Written by hand\n"
    page.write_text("no markers")
    with pytest.raises(RuntimeError, match="lacks the markers"):
        report.update_doc(page, "x")


def test_every_figure_on_the_pages_is_the_results_files():
    from bench import figures

    results = json.loads((REPO / "bench" / "results" / "results.json").read_text())
    performance = (REPO / "docs" / "performance.md").read_text()
    if results != json.loads(BEFORE_EDGE_WORKER.read_text()):  # until a run on the edge worker, results.json is the "before" run
        assert report.render(results, chart_path="performance.svg").rstrip("\n") in performance, (
            "docs/performance.md's generated part is not bench/results/results.json's: run `python -m bench.report bench/results/results.json`"
        )
    known = figures.figures(results)
    for page in figures.PAGES:
        text = (REPO / page).read_text()
        assert figures.render_spans(text, known) == text, f"{page} quotes figures bench/results/results.json does not hold"
    scaling = (REPO / "docs" / "scaling.md").read_text()
    assert len(figures.SPAN.findall(scaling)) >= 15, "scaling.md's figures are quoted from the results, not typed"


def test_the_run_before_the_edge_worker_stays_on_the_page_as_its_results_file():
    from bench import chart, event_loop

    performance = (REPO / "docs" / "performance.md").read_text()
    before = json.loads(BEFORE_EDGE_WORKER.read_text())
    assert before["meta"]["started"] == "2026-12-03 08:57 UTC"
    generated = report.as_before(report.render(before, chart_path="performance-before-edge-worker.svg")).rstrip("\n")
    assert generated in performance and report.BEGIN not in generated
    assert performance.index(report.END) < performance.index(generated), "the before run sits apart from the part `make bench` rewrites"
    assert (REPO / "docs" / "performance-before-edge-worker.svg").read_text() == chart.render(before)
    loop_before = json.loads((REPO / "bench" / "results" / "before-edge-worker-event-loop.json").read_text())
    loop_generated = event_loop.as_before(event_loop.render(loop_before, "performance-async-before-edge-worker.svg"))
    assert loop_generated in performance and "gunicorn's uvicorn worker" in loop_generated
    assert performance.index(event_loop.END) < performance.index(loop_generated)
    assert (REPO / "docs" / "performance-async-before-edge-worker.svg").read_text() == event_loop.chart(loop_before)


def test_the_edge_worker_pairs_are_targets_of_the_same_shape_and_checked_against_the_issue():
    from bench import targets

    by_name = {target.name: target for target in targets.all_targets()}
    for name in ("bare-gunicorn-gthread-4", "bare-gunicorn-gthread-h2c-4"):
        command = by_name[name].command(8080)
        assert command[command.index("-k") + 1] == "gthread" and command[command.index("--threads") + 1] == "4" and command[command.index("-w") + 1] == "1"
    assert "--http2-cleartext" in by_name["bare-gunicorn-gthread-h2c-4"].command(8080) and by_name["bare-gunicorn-gthread-h2c-4"].http2
    for name in ("funcwsgi-gunicorn-4", "funcwsgi-granian-4", "funcwsgi-gunicorn-http2-4"):
        assert (by_name[name].env["SERVER_WORKERS"], by_name[name].env["SERVER_NUMTHREADS"]) == ("1", "4"), name
    assert by_name["funcwsgi-gunicorn-http2-4"].http2 and by_name["funcwsgi-gunicorn-http2-4"].baseline == "bare-gunicorn-gthread-h2c-4"

    def entry(name, rates, p99=1000.0):
        return {"name": name, "group": "funcwsgi" if name.startswith("funcwsgi") else "reference",
                "samples": [{"round": n, "c16": {"requests_per_s": r, "p99_us": p99}} for n, r in enumerate(rates, 1)]}

    results = {"targets": [
        entry("bare-gunicorn-gthread-4", [6000, 6000]), entry("bare-gunicorn-gthread-h2c-4", [4000, 4000]),
        entry("funcwsgi-gunicorn-4", [15000, 16000], p99=900.0), entry("funcwsgi-granian-4", [14500, 15500]),
        entry("funcwsgi-gunicorn-http2-4", [9000, 9400]),
    ]}
    found = {check["check"]: check for check in report.checks(results) if "edge worker" in check["check"]}
    assert [(check["value"], check["ok"]) for check in found.values()] == [(2.58, True), (1.03, True), (2.3, False), (0.9, True)]
    assert [check["limit"] for check in found.values()] == ["≥ 2.5×", "≥ 1×", "≥ 2.5×", "≤ 1×"]


def test_a_figure_typed_by_hand_is_caught():
    from bench import figures

    results = json.loads((REPO / "bench" / "results" / "results.json").read_text())
    typed = "about <!-- bench:funcwsgi-rss -->30 MB<!-- /bench --> per worker"
    assert figures.render_spans(typed, figures.figures(results)) != typed
    with pytest.raises(KeyError, match="bench:no-such-figure"):
        figures.render_spans("<!-- bench:no-such-figure -->1<!-- /bench -->", figures.figures(results))


def test_event_loop_ratios_pair_samples_of_the_same_round_and_checks_follow_the_limits():
    from bench import event_loop

    def entry(rates):
        return {"label": "x", "group": "io", "kind": "funcwsgi", "failures": [],
                "samples": [{"round": n, "requests_per_s": r, "p99_us": 1000, "p50_us": 1, "cpu_us_per_request": 1, "errors": 0} for n, r in rates]}

    results = {"targets": {
        "io-async": entry([(1, 300), (2, 900), (3, 500)]),
        "io-func-python": entry([(1, 200), (3, 250)]),  # round 2 failed: rounds 1 and 3 pair up (1.5, 2.0)
    }}
    assert event_loop.ratio_of(results, "io-async", "io-func-python", "requests_per_s") == 1.75
    assert event_loop.ratio_of(results, "io-async", "missing", "requests_per_s") is None
    event_loop.summarize(results)
    by_name = {check["name"]: check for check in results["checks"]}
    assert by_name["async I/O-bound req/s vs func-python"]["passed"] is True
    assert by_name["async I/O-bound p99 vs func-python"] == {
        "name": "async I/O-bound p99 vs func-python", "value": 1.0, "limit": 1.0, "at_least": False, "passed": True,
    }
    assert by_name["async I/O-bound CPU per call vs func-python"]["limit"] == 1.2
    assert by_name["async hello vs bare ASGI, granian"]["passed"] is False  # not measured: not met


def test_the_event_loop_section_of_performance_md_is_its_results_file():
    from bench import event_loop

    results = json.loads((REPO / "bench" / "results" / "event_loop.json").read_text())
    performance = (REPO / "docs" / "performance.md").read_text()
    # Until a run on the edge worker, event_loop.json is the "before" run, on the page under the before markers (the test above).
    assert results == json.loads((REPO / "bench" / "results" / "before-edge-worker-event-loop.json").read_text()) or event_loop.render(results, event_loop.CHART.name) in performance, (
        "docs/performance.md's event-loop part is not bench/results/event_loop.json's: run `python -m bench.event_loop`"
    )
    svg = (REPO / "docs" / "performance-async.svg").read_text()
    assert svg == event_loop.chart(results)


def test_the_runs_table_of_performance_md_is_the_history_file_and_the_current_run():
    from bench import history

    results = json.loads((REPO / "bench" / "results" / "results.json").read_text())
    kept = history.load()
    assert results["meta"]["started"] in [run["started"] for run in kept], (
        "bench/results/history.json lacks the run of results.json: run `python -m bench.report bench/results/results.json`"
    )
    performance = (REPO / "docs" / "performance.md").read_text()
    table = history.render(history.runs(kept, results), results["meta"]["started"])
    assert table.rstrip("\n") in performance, "docs/performance.md's runs table is not bench/results/history.json's: run `python -m bench.report bench/results/results.json`"


def test_each_kept_run_is_the_results_file_it_names():
    """A row recovered from git says which commit's results.json it summarises; it must be exactly that summary."""
    from bench import history

    checked = 0
    for run in history.load():
        prefix = "results.json at "
        if not run["source"].startswith(prefix):
            assert run["source"] == "make bench" or "results file not kept" in run["source"], run["source"]
            continue
        commit = run["source"][len(prefix):]
        shown = subprocess.run(["git", "show", f"{commit}:bench/results/results.json"], cwd=REPO, capture_output=True, text=True)
        if shown.returncode != 0:
            pytest.skip(f"commit {commit} is not in this clone (a shallow one?): {shown.stderr.strip()}")
        assert history.summarize(json.loads(shown.stdout), run["source"]) == run, commit
        checked += 1
    assert checked >= 3


def test_recording_a_run_keeps_the_earlier_ones_and_replaces_its_own(tmp_path):
    from bench import history

    def results(started, value):
        check = {"check": "req/s: funcwsgi ÷ Functions Framework", "value": value, "unit": "×", "ok": value >= 1.6}
        target = {"name": "bare-granian", "summary": {"c16": {"cpu_us_per_request": 11.0}}}
        return {"meta": {"started": started, "command": "python -m bench", "loadavg_before": [1.0, 1.0, 1.0], "elapsed_s": 500.0},
                "targets": [target], "checks": [check]}

    path = tmp_path / "history.json"
    history.record(results("2026-12-02 09:00 UTC", 1.7), path)
    history.record(results("2026-12-01 09:00 UTC", 1.5), path)
    history.record(results("2026-12-02 09:00 UTC", 1.9), path)  # the same run again, re-rendered
    kept = history.load(path)
    assert [(run["started"], run["checks"]["req/s: funcwsgi ÷ Functions Framework"]["value"]) for run in kept] == [
        ("2026-12-01 09:00 UTC", 1.5), ("2026-12-02 09:00 UTC", 1.9),
    ]
    table = history.render(kept, "2026-12-02 09:00 UTC")
    assert "| **2026-12-02 09:00 UTC** (the run above) | 1.00 | 500 s | – | 1.90× |" in table
    assert "nodejs26, on the runs that measured it:" in table and table.count("| 2026-12-01 09:00 UTC |") == 1


# -- the event-loop variants of bench.inprocess (counted by bench.callgrind in a full run) --------


@pytest.fixture(scope="module")
def loop_runs(tmp_path_factory):
    """Each loop variant run as callgrind runs it (``--only``), a few calls, its answers and its set-up kept: one process each, side by side."""
    from bench.inprocess import LOOP_VARIANTS

    out = tmp_path_factory.mktemp("loop")
    running = {}
    for variant, spec in LOOP_VARIANTS.items():
        calls = 2 * spec.in_flight + 3  # not a multiple of the calls in flight: the last wave is partial
        command = [sys.executable, "-m", "bench.inprocess", "--only", variant, "--calls", str(calls),
                   "--answers", str(out / f"{variant}.answers.json"), "--describe", str(out / f"{variant}.how.json")]
        running[variant] = (calls, subprocess.Popen(command, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True))
    finished = {}
    for variant, (calls, process) in running.items():
        _, stderr = process.communicate(timeout=120)
        assert process.returncode == 0, (variant, stderr[-2000:])
        finished[variant] = (calls, json.loads((out / f"{variant}.answers.json").read_text()), json.loads((out / f"{variant}.how.json").read_text()))
    return finished


def test_every_loop_variant_answers_each_call_200_with_the_hello_body(loop_runs):
    from bench.inprocess import LOOP_VARIANTS

    assert set(loop_runs) == {"loop-bare", "loop-hello", "loop-io", "loop-io-gc700"}
    for variant, (calls, answers, how) in loop_runs.items():
        assert answers == {"200 Hello, world!": calls}, variant
        assert how["in_flight"] == LOOP_VARIANTS[variant].in_flight and how["loop"].startswith("uvloop "), (variant, how)
    assert loop_runs["loop-bare"][2]["in_flight"] == loop_runs["loop-hello"][2]["in_flight"] == 16
    assert loop_runs["loop-io"][2]["in_flight"] == 400


def test_the_funcwsgi_loop_variants_run_under_a_served_workers_collector_threshold(loop_runs):
    from bench.inprocess import PYTHON_GC_THRESHOLD
    from funcwsgi.process import LOOP_GC_THRESHOLD

    served = LOOP_GC_THRESHOLD  # both functions are async: served on the loop
    assert served != PYTHON_GC_THRESHOLD[0]  # else loop-io-gc700 would measure nothing loop-io does not
    thresholds = {variant: how["gc_threshold"] for variant, (_, _, how) in loop_runs.items()}
    assert thresholds["loop-bare"] == thresholds["loop-io-gc700"] == list(PYTHON_GC_THRESHOLD)
    assert thresholds["loop-hello"] == thresholds["loop-io"] == [served, *PYTHON_GC_THRESHOLD[1:]]


def test_callgrind_runs_the_loop_variants_with_enough_calls_and_a_full_run_counts_them():
    from bench import callgrind, run
    from bench.inprocess import LOOP_VARIANTS

    assert run.CALLGRIND_LOOP_VARIANTS == tuple(LOOP_VARIANTS)
    few, many = callgrind.calls_for("loop-io")
    assert (few, many) == (callgrind.LOOP_FEW, callgrind.LOOP_MANY) and callgrind.calls_for("stack") == (callgrind.FEW, callgrind.MANY)
    assert many - few >= 3000  # loop-wide work (timers, the deadline sweep, collector passes) averages out over thousands
    for spec in LOOP_VARIANTS.values():
        assert few % spec.in_flight == 0 and many % spec.in_flight == 0, spec


def test_the_callgrind_tables_keep_the_loop_variants_apart_with_how_each_ran():
    results = json.loads((REPO / "bench" / "results" / "results.json").read_text())
    results["callgrind"] = {"bare": 4000, "stack": 63000, "loop-bare": 19400, "loop-hello": 113700, "loop-io-gc700": 170000}
    results["callgrind_loop"] = {
        "loop-bare": {"label": "bare ASGI", "in_flight": 16, "gc_threshold": [700, 10, 10], "calls": [800, 4000], "runs_each": 3},
        "loop-hello": {"label": "async hello", "in_flight": 16, "gc_threshold": [10000, 10, 10], "calls": [800, 4000], "runs_each": 3},
    }
    page = report.render(results, chart_path="performance.svg")
    wsgi = page[page.index("Instructions per request under callgrind"):page.index("The event-loop path under callgrind")]
    assert "| stack | 63,000 |" in wsgi and "loop-" not in wsgi
    loop = page[page.index("The event-loop path under callgrind"):page.index("### Commands")]
    assert "800 and 4,000 calls (each count run 3 times, its median kept) differenced" in loop
    assert "| loop-bare | bare ASGI | 16 | 700 | 19,400 | – |" in loop
    assert "| loop-hello | async hello | 16 | 10,000 | 113,700 | +94,300 |" in loop
    assert "| loop-io-gc700 | – | – | – | 170,000 | +150,600 |" in loop  # counted without its description (bench.report --callgrind)


def test_the_node_cost_table_splits_cpu_and_says_what_the_2x_target_leaves_nodejs26():
    def target(name, label, cpu, system):
        return {"name": name, "label": label, "summary": {"c16": {"cpu_us_per_request": cpu, "system_us_per_request": system}}}

    results = {
        "targets": [target("bare-node-http", "bare node:http", 9.0, 5.0), target("nodejs26", "nodejs26", 9.5, 5.2), target("kyma-nodejs26-shaped", "Express shape", 18.0, 5.4)],
        "node_callgrind": {"nodejs26": {"instructions_per_request": 39048, "requests": 25000}},
    }
    table = report.node_cost_table(results)
    assert table[2:5] == [
        "| bare node:http | 9.0 | 5.0 | 4.0 | – |",
        "| nodejs26 | 9.5 | 5.2 | 4.3 | 39,048 |",
        "| Express shape | 18.0 | 5.4 | 12.6 | – |",
    ]
    assert "at most half the Express shape's CPU per request, 9.0 µs" in table[-1]
    assert "5.2 µs of nodejs26's 9.5 µs, which leaves 3.8 µs for its own code against the 4.3 µs it used" in table[-1]
    assert table[-1].endswith("bare node:http's hello world used 4.0 µs.")
    del results["targets"][1]
    assert report.node_cost_table(results) == []


def test_overload_figures_count_answers_and_the_checks_follow_the_issue():
    from bench import overload

    burst = [("200", 0.1)] * 50
    load = {
        "offered": 1000, "seconds": 2.0,
        "answers": [("200", 1.05)] * 200 + [("503", 0.004)] * 790 + [("none", 10.0)] * 10,
        "probes": [("200", 0.01)] * 20, "memory_mb": [50.0, 51.0, 50.5],
        "recovery_s": {"served_s": 0.02, "unqueued_s": 1.2},
    }
    row = overload.figures(burst, load)
    assert (row["ok_per_s"], row["statuses"], row["unanswered"]) == (100.0, {"200": 200, "503": 790, "none": 10}, 10)
    assert (row["admitted_p99_ms"], row["refused_p99_ms"], row["probe_max_ms"]) == (1050.0, 4.0, 10.0)
    checks = overload.checks(row)
    assert checks["(a) bursts: 0 refusals"] and checks["(b) refusals p99 < 10 ms"] and checks["(c) full service within 1 s"]
    assert checks["(b) admitted p99 ≤ target + 100 ms"] and checks["(b) memory flat (+20% at most)"]
    assert not checks["(b) every call answered"]  # ten calls unanswered: a miss, never throughput
    slow = overload.checks({**row, "admitted_p99_ms": 1200.0, "refused_p99_ms": 12.0, "recovery_s": None, "memory_last_mb": 80.0})
    assert not any(slow[name] for name in slow if name.startswith(("(b) admitted", "(b) refusals", "(c)", "(b) memory")))


def test_the_overload_load_runs_on_the_other_core_and_each_row_says_how_busy_the_machine_was():
    from bench import overload

    cores = os.sched_getaffinity(0)
    load_core = max(cores)
    with overload.load_pinned(load_core):
        assert os.sched_getaffinity(0) == {load_core}
    assert os.sched_getaffinity(0) == cores
    row = overload.figures([("200", 0.1)], {
        "offered": 10, "seconds": 1.0, "answers": [("200", 0.1)] * 10, "probes": [("200", 0.01)],
        "memory_mb": [50.0], "recovery_s": {"served_s": 0.0, "unqueued_s": 0.0},
    })
    row["load_average"] = [2.5, 3.75]
    results = {
        "meta": {"started": "2026-12-06 10:00 UTC", "command": "python -m bench.overload", "overload_seconds": 30.0},
        "targets": {"funcwsgi-loop": {"label": "funcwsgi, async", "kind": "funcwsgi", "failures": [], "row": row}},
    }
    (line,) = [line for line in overload.render(results).splitlines() if line.startswith("| funcwsgi, async | 0 of 1 ")]
    assert line.endswith("| 2.5 → 3.75 |")


def test_the_overload_sections_of_the_docs_are_its_results_file():
    from bench import overload

    results = json.loads((REPO / "bench" / "results" / "overload.json").read_text())
    generated = overload.render(results)
    assert generated in (REPO / "docs" / "performance.md").read_text(), "run `python -m bench.overload`"
    assert generated in (REPO / "docs" / "reliability.md").read_text(), "run `python -m bench.overload`"


def test_python_callgrind_runs_a_row_in_another_checkout_with_that_checkouts_interpreter(tmp_path):
    from pathlib import Path

    from bench import python_callgrind
    from bench.targets import HELLO, PYTHON

    by_name = {target.name: target for target in all_targets()}
    other, python = Path("/elsewhere"), Path("/elsewhere/.venv/bin/python")
    moved = python_callgrind.relocated(by_name["funcwsgi-gunicorn-conf"], python, other)
    assert moved.command(8080)[0] == str(python) and moved.cwd == other
    assert moved.env["HANDLER_FOLDER"] == str(other / HELLO.relative_to(REPO))
    bare = python_callgrind.relocated(by_name["bare-waitress"], python, other)
    assert bare.cwd == other / "bench" / "apps" and "bare:app" in bare.command(8080)
    assert python_callgrind.relocated(by_name["bare-waitress"], Path(PYTHON), python_callgrind.REPO) is by_name["bare-waitress"]
    assert set(python_callgrind.TARGETS + python_callgrind.HTTP2_TARGETS) <= set(by_name)


def test_python_callgrind_says_which_rows_moved_beyond_the_spread():
    from bench import python_callgrind

    def run(commit, rows):
        counts = {name: [{"instructions_per_request": value, "requests": 1000} for value in values] for name, values in rows.items()}
        return {"meta": {"commit": commit, "started": "then", "versions": {"gunicorn": commit}}, "rows": counts}

    before = run("23.0.0", {"bare-waitress": [100_000, 101_000], "funcwsgi-gunicorn": [200_000], "funcwsgi-waitress": [150_000]})
    after = run("27.0.1", {"bare-waitress": [100_500], "funcwsgi-gunicorn": [260_000], "funcwsgi-waitress": [120_000]})
    assert round(python_callgrind.spread(before, after), 4) == 0.01
    table = python_callgrind.render(before, after)
    assert "gunicorn 23.0.0 → 27.0.1" in table and "the largest spread, 1.0%" in table
    assert "| bare WSGI, waitress | 100,500 | 100,500 | 1.00× | 1.0% | no |" in table
    assert "| funcwsgi, gunicorn | 200,000 | 260,000 | 1.30× | – | more |" in table
    assert "| funcwsgi, waitress | 150,000 | 120,000 | 0.80× | – | fewer |" in table
    wide = run("27.0.1", {"funcwsgi-gunicorn": [200_000, 300_000]})  # a row whose own counts differ by 40%: 1.25× is no change
    assert "| funcwsgi, gunicorn | 200,000 | 250,000 | 1.25× | 40.0% | no |" in python_callgrind.render(before, wide)
    assert python_callgrind.merged(REPO / "no-such-file.json", after) is after


def test_the_before_and_after_table_of_performance_md_is_its_results_files():
    from bench import python_callgrind

    before, after = (json.loads((REPO / "bench" / "results" / f"rework-{side}.json").read_text()) for side in ("before", "after"))
    assert python_callgrind.render(before, after) in (REPO / "docs" / "performance.md").read_text(), (
        "run `python -m bench.python_callgrind --compare bench/results/rework-before.json bench/results/rework-after.json`"
    )


@pytest.mark.skipif(not shutil.which("valgrind"), reason="valgrind is not installed (make setup installs it)")
@pytest.mark.slow("serves calls to a waitress server under callgrind, which runs Python about 50 times slower")
def test_python_callgrind_counts_a_server_over_http(tmp_path):
    out = tmp_path / "counts.json"
    finished = subprocess.run(
        # Three counted seconds: the count's shape is the point here, not its precision (a full count takes ten).
        [sys.executable, "-m", "bench.python_callgrind", "bare-waitress", "--seconds", "3", "--json", str(out)],
        cwd=REPO, capture_output=True, text=True, timeout=300,
    )
    assert finished.returncode == 0, finished.stderr
    count = json.loads(out.read_text())["rows"]["bare-waitress"][0]
    # Dozens of requests at the least: callgrind runs Python some fifty times slower, and a loaded machine
    # slower still (56 in two seconds beside phase 1 and other tests, at a load average of 10).
    assert count["processes"] == 1 and count["requests"] > 30
    assert json.loads(out.read_text())["meta"]["counted_seconds"] == 3
    assert 50_000 < count["instructions_per_request"] < 5_000_000  # a Python hello world: tens to hundreds of thousands


def test_a_counted_start_is_the_answering_workers_count(tmp_path):
    """A forked worker's callgrind count holds its master's up to the fork: the worker's is the start's path, not the sum."""
    from bench.cold_start import on_the_way

    def dump(pid: int, total: int):
        path = tmp_path / f"callgrind.{pid}.1"
        path.write_text(f"version: 1\ncmd: python\nsummary: {total}\n")
        return path

    dumps = {10: dump(10, 410), 11: dump(11, 383)}  # the master idles on after the fork and may count more
    assert on_the_way(dumps, [11]) == 383
    assert on_the_way({10: dumps[10]}, []) == 410  # a server of one process
    with pytest.raises(RuntimeError, match="no worker"):
        on_the_way(dumps, [12])


def test_otel_attributes_times_each_variant_by_the_thread_cpu_of_its_spans():
    from bench.otel_attributes import VARIANTS, time_per_span

    timed = {variant: time_per_span(variant, rounds=3, batch=20) for variant in VARIANTS}
    assert all(0 < microseconds < 10_000 for microseconds in timed.values()), timed
