"""The results as an SVG bar chart: throughput and p99 latency at 16 connections, per target.

Plain SVG written by hand, so the chart needs no plotting library::

    python -m bench.chart bench/results/results.json docs/performance.svg
"""

from __future__ import annotations

import json
import sys
from html import escape
from pathlib import Path
from typing import Any

COLORS = {"reference": "#9e9e9e", "funcwsgi": "#2e7d32", "alternative": "#c62828"}
LEGEND = {"reference": "bare WSGI (server limit)", "funcwsgi": "funcwsgi", "alternative": "alternatives"}
LABEL_WIDTH = 290
PANEL_WIDTH = 300
GAP = 40
ROW = 24
TOP = 64


def _rows(results: dict[str, Any]) -> list[tuple[str, str, float, float]]:
    rows = []
    for entry in results["targets"]:
        summary = entry.get("summary", {}).get("c16")
        if summary and summary.get("requests_per_s"):
            rows.append((entry["label"], entry["group"], float(summary["requests_per_s"]), float(summary["p99_us"]) / 1000))
    return rows


def _panel(x: float, title: str, values: list[float], colors: list[str], unit: str, digits: int) -> list[str]:
    top = max(values) if values else 1.0
    parts = [f'<text x="{x}" y="{TOP - 12}" class="title">{escape(title)}</text>']
    for index, (value, color) in enumerate(zip(values, colors, strict=False)):
        y = TOP + index * ROW
        width = max(1.0, PANEL_WIDTH * value / top) if top else 1.0
        parts.append(f'<rect x="{x}" y="{y + 4}" width="{width:.1f}" height="{ROW - 8}" fill="{color}"/>')
        parts.append(f'<text x="{x + width + 4:.1f}" y="{y + ROW / 2 + 4}" class="value">{value:,.{digits}f}{unit}</text>')
    return parts


def render(results: dict[str, Any]) -> str:
    rows = _rows(results)
    height = TOP + len(rows) * ROW + 44
    width = LABEL_WIDTH + 2 * (PANEL_WIDTH + 70) + GAP
    colors = [COLORS.get(group, "#555") for _, group, _, _ in rows]
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
        "<style>.title{font-weight:bold;font-size:13px}.value{fill:#333}.label{fill:#111}.note{fill:#555;font-size:11px}</style>",
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="8" y="20" class="title">Hello world over HTTP, wrk at 16 connections, server pinned to one core ({escape(results["meta"]["started"])})</text>',
    ]
    for index, (label, _, _, _) in enumerate(rows):
        parts.append(f'<text x="{LABEL_WIDTH - 8}" y="{TOP + index * ROW + ROW / 2 + 4}" text-anchor="end" class="label">{escape(label)}</text>')
    parts += _panel(LABEL_WIDTH, "requests/s (higher is better)", [r for _, _, r, _ in rows], colors, "", 0)
    parts += _panel(LABEL_WIDTH + PANEL_WIDTH + 70 + GAP, "p99 latency, ms (lower is better)", [p for _, _, _, p in rows], colors, " ms", 1)
    legend_y = TOP + len(rows) * ROW + 24
    x = 8.0
    for group, text in LEGEND.items():
        parts.append(f'<rect x="{x}" y="{legend_y - 10}" width="12" height="12" fill="{COLORS[group]}"/>')
        parts.append(f'<text x="{x + 16}" y="{legend_y}" class="note">{escape(text)}</text>')
        x += 30 + 7 * len(text)
    parts.append(f'<text x="{x + 10}" y="{legend_y}" class="note">medians of {results["meta"]["mode"]["rounds"]} interleaved rounds</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print("usage: python -m bench.chart RESULTS_JSON OUT_SVG", file=sys.stderr)
        return 2
    Path(args[1]).write_text(render(json.loads(Path(args[0]).read_text())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
