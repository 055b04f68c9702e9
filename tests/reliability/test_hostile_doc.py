"""The hostile-client tables in docs/reliability.md are what the results file of `make hostile` gives."""

from __future__ import annotations

import json

from ..support.paths import REPO
from .hostile import ATTACK_NAMES
from .hostile_doc import BEGIN, END, GAPS_BEGIN, GAPS_END, render, render_gaps

RESULTS = REPO / "docs" / "hostile-results.json"
PAGE = REPO / "docs" / "reliability.md"
SERVERS = REPO / "docs" / "servers.md"


def test_the_tables_in_the_page_are_generated_from_the_results_file():
    results = json.loads(RESULTS.read_text())
    page = PAGE.read_text()
    between = page.split(BEGIN, 1)[1].split(END, 1)[0]
    assert between == "\n" + render(results), "run `make hostile` (or tests.reliability.hostile_doc) to regenerate the tables"
    gaps = SERVERS.read_text().split(GAPS_BEGIN, 1)[1].split(GAPS_END, 1)[0]
    assert gaps == "\n" + render_gaps(results)


def test_the_start_up_warnings_name_what_the_results_file_measured():
    """An adapter's hostile_gaps (the start-up warning) are the attacks it did not hold in the measured run."""
    from funcwsgi.adapters import ADAPTERS

    results = json.loads(RESULTS.read_text())
    for result in results["adapters"]:
        failed = tuple(row["attack"] for row in result["attacks"] if not row["answered"])
        assert ADAPTERS[result["adapter"]].hostile_gaps == failed, result["adapter"]


def test_the_results_file_covers_every_adapter_and_attack():
    from funcwsgi.adapters import HTTP_ADAPTERS

    results = json.loads(RESULTS.read_text())
    assert [result["adapter"] for result in results["adapters"]] == list(HTTP_ADAPTERS)
    for result in results["adapters"]:
        assert [row["attack"] for row in result["attacks"]] == list(ATTACK_NAMES), result["adapter"]
