"""Reading a Prometheus text exposition: the samples of a series, their total, the call series by method.

Standard library only (the conformance kit uses it).
"""

from __future__ import annotations

import re


def samples(text: str, name: str) -> list[tuple[dict[str, str], float]]:
    """Every sample of ``name`` in a Prometheus text exposition: (labels, value)."""
    pattern = re.compile(rf"^{re.escape(name)}(\{{[^}}]*\}})?\s+(\S+)", re.M)
    return [(dict(re.findall(r'(\w+)="([^"]*)"', match.group(1) or "")), float(match.group(2))) for match in pattern.finditer(text)]


def metric_total(text: str, name: str, **labels: str) -> float:
    """The sum of the samples of ``name`` whose labels include ``labels``."""
    total = 0.0
    for found, value in samples(text, name):
        if all(found.get(k) == v for k, v in labels.items()):
            total += value
    return total


def by_method(text: str) -> dict[tuple[str, str], float]:
    """{(sample name, method label): value} of the function_* series (histogram buckets left out)."""
    found = {}
    for match in re.finditer(r"^(function_\w+)(\{[^}]*\})?\s+(\S+)", text, re.M):
        labels = dict(re.findall(r'(\w+)="([^"]*)"', match.group(2) or ""))
        if "le" not in labels:
            found[(match.group(1), labels.get("method", ""))] = float(match.group(3))
    return found
