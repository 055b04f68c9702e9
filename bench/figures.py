"""The figures pages other than the generated part of docs/performance.md quote, from the same results.

A page quotes one as ``<!-- bench:NAME -->value<!-- /bench -->``, inline in a
sentence or a table cell; ``make bench`` and ``python -m bench.report RESULTS``
rewrite every such span from ``bench/results/results.json``, and
``tests/test_bench.py`` fails when a page shows another value than the results
hold, so no page carries a figure typed by hand.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

from .report import paired

SPAN = re.compile(r"<!-- bench:(?P<name>[a-z0-9-]+) -->(?P<value>.*?)<!-- /bench -->")
PAGES = ("docs/performance.md", "docs/scaling.md", "docs/migration-kyma-python314.md", "docs/observability.md", "docs/servers.md")

#: The function CPU per call of scaling.md's worked examples, in milliseconds.
EXTRA_WORK_MS = {"hello": 0.0, "light": 1.0, "heavy": 5.0}
#: Requests per second and pod CPUs of those examples, and the autoscaler's target utilisation.
EXAMPLE_LOAD, TARGET_UTILISATION = 1000, 0.7
#: Checks (report.checks) a page quotes as ``bench:check-NAME``: the measured value with its unit.
CHECKS = {
    "funcwsgi-over-bare-gthread": "req/s: funcwsgi ÷ bare WSGI, same gunicorn gthread settings",
    "funcwsgi-over-functions-framework": "req/s: funcwsgi ÷ Functions Framework",
    "funcwsgi-over-kyma": "req/s: funcwsgi ÷ Kyma-shaped runtime",
    "granian-over-bare": "req/s: funcwsgi on granian ÷ bare WSGI on granian",
    "cold-start-over-bare": "cold start: funcwsgi ÷ bare gunicorn",
    "cold-start-over-functions-framework": "cold start: funcwsgi ÷ Functions Framework",
    "cold-start-granian-over-bare": "cold start: funcwsgi on granian ÷ bare granian",
    "tracing-over-floor": "in-process: tracing on ÷ the OpenTelemetry SDK's floor (CPU added)",
    "tracing-server-cpu": "tracing on: server CPU added per request",
    "tracing-inprocess": "in-process: tracing on, CPU added per request (export included)",
    "nodejs26-over-bare-node": "req/s: nodejs26 ÷ bare node:http",
    "nodejs26-over-express": "req/s: nodejs26 ÷ Kyma-nodejs26-shaped runtime (Express 5)",
    "nodejs26-over-express-traced": "req/s: nodejs26 ÷ Kyma-nodejs26-shaped runtime with its tracing instrumentation",
    "nodejs26-inprocess-call-path": "in-process: nodejs26 call path over bare node:http (CPU)",
    "nodejs26-inprocess-default": "in-process: nodejs26 default settings over bare node:http (CPU)",
}
#: Targets whose server CPU per request at 16 connections a page quotes as ``bench:cpu-TARGET``.
CPU_TARGETS = ("bare-node-http", "nodejs26", "kyma-nodejs26-shaped", "kyma-nodejs26-shaped-traced", "bare-granian", "funcwsgi-granian")


def _summary(results: dict[str, Any], name: str) -> dict[str, Any]:
    for entry in results["targets"]:
        if entry["name"] == name:
            summary: dict[str, Any] = entry["summary"]
            return summary
    raise KeyError(f"no target {name!r} in the results")


def _thousands(value: float) -> str:
    return f"{value:,.0f}"


def _kilo(instructions: float) -> str:
    return f"{instructions / 1000:.0f}k"


def figures(results: dict[str, Any]) -> dict[str, str]:
    """Every quotable figure, by the name pages use."""
    meta = results["meta"]
    served = _summary(results, "funcwsgi-gunicorn-conf")  # `gunicorn funcwsgi:app`, as a container runs it
    bare = _summary(results, "bare-gunicorn-gthread")
    rps = served["c16"]["requests_per_s"]
    found = {
        "run": meta["started"],
        "rounds": str(meta["mode"]["rounds"]),
        "funcwsgi-rps": _thousands(rps),
        "bare-gthread-rps": _thousands(bare["c16"]["requests_per_s"]),
        "funcwsgi-rss": f"{served['rss_mb']:.1f} MB",
        "bare-gthread-rss": f"{bare['rss_mb']:.1f} MB",
        "funcwsgi-cold-start": f"{served['cold_start_ms']:.0f} ms",
        "bare-gthread-cold-start": f"{bare['cold_start_ms']:.0f} ms",
    }
    share_ms = 1000 / rps
    found["funcwsgi-share"] = f"1/{_thousands(rps)} s ≈ {share_ms:.2f} ms"
    for example, extra in EXTRA_WORK_MS.items():
        throughput = 1000 / (share_ms + extra)
        pods = math.ceil(EXAMPLE_LOAD / (throughput * TARGET_UTILISATION))
        found[f"{example}-cpu"] = f"{share_ms:.2f} ms" if not extra else f"+ {extra:g} ms"
        found[f"{example}-throughput"] = f"≈ {_thousands(round(throughput, -1))} req/s"
        found[f"{example}-pods"] = f"ceil({EXAMPLE_LOAD} / ({throughput:.0f} × {TARGET_UTILISATION:g})) = {pods}"
    found["bare-granian-cpu"] = f"{_summary(results, 'bare-granian')['c16']['cpu_us_per_request']:.0f} µs"
    cpu = {row["id"]: row["cpu_us"] for row in results.get("inprocess", [])}
    for variant in ("stack-access-log", "stack-handoff", "stack-tracing"):
        if variant in cpu and "stack" in cpu:
            found[f"inprocess-{variant}-adds"] = f"{cpu[variant] - cpu['stack']:.1f} µs"
    if "layer-timeout" in cpu and "layer-cloudevents" in cpu:  # the row below it in the table
        found["inprocess-timeout-layer"] = f"{cpu['layer-timeout'] - cpu['layer-cloudevents']:.2f} µs"
    by_check = {check["check"]: check for check in results.get("checks", [])}
    for name, check_name in CHECKS.items():
        if check_name in by_check:
            check = by_check[check_name]
            found[f"check-{name}"] = f"{check['value']:.2f}×" if check["unit"] == "×" else f"{check['value']:.1f}{check['unit']}"
    missed = [check["check"] for check in results.get("checks", []) if not check["ok"]]
    found["checks-missed"] = "; ".join(missed) or "none"
    found["checks-missed-count"] = f"{len(missed)} of {len(results.get('checks', []))}"
    for target in CPU_TARGETS:
        entry = next((entry for entry in results["targets"] if entry["name"] == target and entry.get("summary")), None)
        if entry is not None:
            found[f"cpu-{target}"] = f"{entry['summary']['c16']['cpu_us_per_request']:.1f} µs"
    # nodejs26's ratios on server CPU per request, read as its req/s targets are (the other's ÷ nodejs26's).
    for name, other in (("bare-node", "bare-node-http"), ("express", "kyma-nodejs26-shaped"), ("express-traced", "kyma-nodejs26-shaped-traced")):
        ratio = paired(results, other, "nodejs26", "c16.cpu_us_per_request")
        if ratio is not None:
            found[f"cpu-ratio-nodejs26-over-{name}"] = f"{ratio:.2f}×"
    node_cpu = {row["id"]: row["cpu_us"] for row in results.get("inprocess_node", [])}
    if "node-bare" in node_cpu:
        found["inprocess-node-bare"] = f"{node_cpu['node-bare']:.1f} µs"
    for entry in results["targets"]:
        system = entry.get("summary", {}).get("c16", {}).get("system_us_per_request")
        if entry["name"] in CPU_TARGETS and system is not None:
            found[f"system-cpu-{entry['name']}"] = f"{system:.1f} µs"
    for name, count in results.get("node_callgrind", {}).items():
        found[f"node-instructions-{name}"] = f"{count['instructions_per_request']:,}"
    counts = results.get("callgrind", {})
    for key, value in counts.items():
        found[f"instructions-{key}"] = f"{value:,}"
    if "bare" in counts:
        for key in ("call-path", "stack"):
            if key in counts:
                found[f"instructions-{key}-over-bare"] = _kilo(counts[key] - counts["bare"])
    for key in ("stack-flask-global", "stack-flask-request", "stack-handoff", "stack-tracing"):
        if key in counts and "stack" in counts:
            found[f"instructions-{key}-over-stack"] = _kilo(counts[key] - counts["stack"])
    return found


def render_spans(text: str, known: dict[str, str]) -> str:
    def value(match: re.Match[str]) -> str:
        name = match["name"]
        if name not in known:
            raise KeyError(f"a page quotes bench:{name}, which bench/figures.py does not know")
        return f"<!-- bench:{name} -->{known[name]}<!-- /bench -->"

    return SPAN.sub(value, text)


def update_pages(repo: Path, results: dict[str, Any]) -> list[str]:
    """Rewrite the spans of every page; the pages that changed."""
    known = figures(results)
    changed = []
    for page in PAGES:
        path = repo / page
        text = path.read_text()
        updated = render_spans(text, known)
        if updated != text:
            path.write_text(updated)
            changed.append(page)
    return changed
