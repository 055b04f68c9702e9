"""The request-framing tables in docs/reliability.md are what docs/framing-results.json gives, for every case and path."""

from __future__ import annotations

import json

from ..support.paths import REPO
from .framing import PATH_NAMES
from .framing_cases import CASE_NAMES
from .framing_doc import BEGIN, END, render

RESULTS = REPO / "docs" / "framing-results.json"
PAGE = REPO / "docs" / "reliability.md"


def test_the_tables_in_the_page_are_generated_from_the_results_file():
    results = json.loads(RESULTS.read_text())
    between = PAGE.read_text().split(BEGIN, 1)[1].split(END, 1)[0]
    assert between == "\n" + render(results), "run `make framing` (or tests.reliability.framing_doc alone)"


def test_the_results_file_covers_every_path_and_case():
    cells = json.loads(RESULTS.read_text())["cells"]
    assert list(cells) == list(PATH_NAMES)
    for path in PATH_NAMES:
        assert list(cells[path]) == list(CASE_NAMES), path
