"""The benchmark harness (bench/): its quick mode really starts and loads every target.

The benchmark itself is not run in CI (too slow, too noisy to judge); this
smoke test only proves that every target starts and answers 200 under wrk,
so the harness cannot rot unnoticed.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from bench import report
from bench.targets import all_targets

from .servers import REPO


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    finished = subprocess.run(
        [sys.executable, "-m", "bench", "--quick", "--out", str(out), "--no-docs"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return finished, out


def test_quick_mode_starts_every_target_and_gets_200s(quick_run):
    finished, out = quick_run
    assert finished.returncode == 0, finished.stderr[-4000:]
    results = json.loads((out / "results.json").read_text())
    assert [entry["name"] for entry in results["targets"]] == [target.name for target in all_targets()]
    for entry in results["targets"]:
        assert entry["ok"], (entry["name"], entry["failures"])
        summary = entry["summary"]
        for connections in (16, 1):
            load = summary[f"c{connections}"]
            assert load["requests"] > 0 and load["errors"] == 0, (entry["name"], connections, load)
            assert load["cpu_us_per_request"] > 0, entry["name"]
        assert summary["cold_start_ms"] > 0 and summary["rss_mb"] > 0, entry["name"]


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
    assert markdown.startswith(report.BEGIN) and "| target | req/s @16 |" in markdown


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
    assert report.render(results, chart_path="performance.svg").rstrip("\n") in performance, (
        "docs/performance.md's generated part is not bench/results/results.json's: run `python -m bench.report bench/results/results.json`"
    )
    known = figures.figures(results)
    for page in figures.PAGES:
        text = (REPO / page).read_text()
        assert figures.render_spans(text, known) == text, f"{page} quotes figures bench/results/results.json does not hold"
    scaling = (REPO / "docs" / "scaling.md").read_text()
    assert len(figures.SPAN.findall(scaling)) >= 15, "scaling.md's figures are quoted from the results, not typed"


def test_a_figure_typed_by_hand_is_caught():
    from bench import figures

    results = json.loads((REPO / "bench" / "results" / "results.json").read_text())
    typed = "about <!-- bench:funcwsgi-rss -->30 MB<!-- /bench --> per worker"
    assert figures.render_spans(typed, figures.figures(results)) != typed
    with pytest.raises(KeyError, match="bench:no-such-figure"):
        figures.render_spans("<!-- bench:no-such-figure -->1<!-- /bench -->", figures.figures(results))
