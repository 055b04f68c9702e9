"""The hostile-client tables of docs/reliability.md, written from a results file of the matrix.

    python -m tests.reliability.hostile_doc docs/hostile-results.json docs/reliability.md docs/servers.md

Replaces what stands between the ``<!-- hostile-matrix -->`` and
``<!-- /hostile-matrix -->`` markers of the first page (the whole matrix) and
between ``<!-- hostile-gaps -->`` and ``<!-- /hostile-gaps -->`` of the second
(what each adapter cannot hold); nothing there is typed by hand.
``tests/reliability/test_hostile_doc.py`` checks that the page holds exactly
what the results file gives.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .hostile import ATTACKS

BEGIN = "<!-- hostile-matrix -->"
END = "<!-- /hostile-matrix -->"
GAPS_BEGIN = "<!-- hostile-gaps -->"
GAPS_END = "<!-- /hostile-gaps -->"


def cell(row: dict[str, Any]) -> str:
    """One adapter under one attack: whether the normal calls were answered, the slowest of them, and any refusal."""
    text = f"answered, {row['worst_ms']:g} ms" if row["answered"] else f"**not answered** ({row['calls_answered']} in 1 s)"
    if "statuses" in row:
        text += "; the attack's requests got " + ", ".join(f"{status if status not in ('0', '-1') else _closed(status)} ×{count}" for status, count in row["statuses"].items())
    if row.get("all_pipelined_answered") is False:
        text += "; pipelined calls lost"
    if not row["recovered"]:
        text += "; **did not recover**"
    return text


def _closed(status: str) -> str:
    return "no answer, closed" if status == "0" else "no answer in 5 s"


def render(results: dict[str, Any]) -> str:
    adapters = results["adapters"]
    names = [result["adapter"] for result in adapters]
    rows = {result["adapter"]: {row["attack"]: row for row in result["attacks"]} for result in adapters}
    lines = [
        f"Measured by `{results['command']}` on {results['taken']} ({results['machine']}, shared with other work: "
        "latencies are not a benchmark). Each cell: were all normal calls made during the attack answered `200` "
        f"within {results['call_budget_s']:g} s, and the slowest of them.",
        "",
        "| Attack | " + " | ".join(names) + " |",
        "|---|" + "---|" * len(names),
    ]
    for attack in ATTACKS:
        if not all(attack.name in rows[name] for name in names):
            continue
        cells = [cell(rows[name][attack.name]) for name in names]
        lines.append(f"| `{attack.name}`: {attack.what} | " + " | ".join(cells) + " |")
    lines.append(
        "| afterwards: threads and descriptors of the serving processes, before → after | "
        + " | ".join(_leaks(result) for result in adapters)
        + " |"
    )
    overloads = [result for result in adapters if "overload" in result]
    if overloads:
        first = overloads[0]["overload"]
        lines += [
            "",
            f"Overload: {first['connections']} clients calling `{first['path']}` one call after another for "
            f"{first['seconds']:g} s (a client told `503` waits its `Retry-After`), probes every 0.2 s meanwhile.",
            "",
            "| Figure | " + " | ".join(result["adapter"] for result in overloads) + " |",
            "|---|" + "---|" * len(overloads),
        ]
        figures: list[tuple[str, Callable[[dict[str, Any]], str]]] = [
            ("answered `200`", lambda o: str(o["statuses"].get("200", 0))),
            ("refused `503`", lambda o: str(o["statuses"].get("503", 0))),
            ("other outcomes", lambda o: ", ".join(f"{s} ×{c}" for s, c in o["statuses"].items() if s not in ("200", "503")) or "none"),
            ("`Retry-After` on the 503s", lambda o: ", ".join(f"`{v}` ×{c}" for v, c in o["retry_after"].items()) or "—"),
            ("`function_rejected_total` increase", lambda o: "—" if o["rejected_metric_delta"] is None else str(o["rejected_metric_delta"])),
            ("admitted calls p50 / p99 / max", lambda o: f"{o['admitted_p50_ms']:g} / {o['admitted_p99_ms']:g} / {o['admitted_max_ms']:g} ms"),
            ("`/healthz` slowest", lambda o: _probe(o["probes"]["/healthz"])),
            ("`/metrics` slowest", lambda o: _probe(o["probes"]["/metrics"])),
        ]
        for label, show in figures:
            lines.append(f"| {label} | " + " | ".join(show(result["overload"]) for result in overloads) + " |")
    return "\n".join(lines) + "\n"


def _leaks(result: dict[str, Any]) -> str:
    leaks = result["leaks"]
    before, after = leaks["before"], leaks["after"]
    verdict = "no leak" if leaks["no_leak"] else "**leaked**"
    return f"{verdict}: threads {before['threads']} → {after['threads']}, fds {before['fds']} → {after['fds']}"


def _probe(seen: dict[str, Any]) -> str:
    return f"{seen['worst_ms']:g} ms" + ("" if seen["answered"] else " (**not all answered**)")


def render_gaps(results: dict[str, Any]) -> str:
    """Per adapter, the attacks under which its normal calls were not all answered, with the figure."""
    what = {attack.name: attack.what for attack in ATTACKS}
    lines = []
    for result in results["adapters"]:
        failed = [row for row in result["attacks"] if not row["answered"]]
        if not failed:
            lines.append(f"- **{result['adapter']}**: every normal call answered within {results['call_budget_s']:g} s under every attack.")
            continue
        items = "; ".join(f"`{row['attack']}` ({what[row['attack']]}): {row['calls_answered']} normal calls answered" for row in failed)
        lines.append(f"- **{result['adapter']}**: {items}.")
    return "\n".join(lines) + "\n"


def replace_between_markers(page: str, text: str, begin_marker: str = BEGIN, end_marker: str = END) -> str:
    head, begin, rest = page.partition(begin_marker)
    _, end, tail = rest.partition(end_marker)
    if not begin or not end:
        raise SystemExit(f"the page has no {begin_marker} ... {end_marker} markers")
    return f"{head}{begin_marker}\n{text}{end_marker}{tail}"


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print("usage: python -m tests.reliability.hostile_doc RESULTS.json RELIABILITY.md SERVERS.md", file=sys.stderr)
        return 2
    results = json.loads(Path(argv[0]).read_text())
    matrix_page, gaps_page = Path(argv[1]), Path(argv[2])
    matrix_page.write_text(replace_between_markers(matrix_page.read_text(), render(results)))
    gaps_page.write_text(replace_between_markers(gaps_page.read_text(), render_gaps(results), GAPS_BEGIN, GAPS_END))
    print(f"wrote the hostile-client tables into {matrix_page} and {gaps_page}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
