"""The request-framing tables of docs/reliability.md, written from the corpus's results file.

    python -m tests.reliability.framing_doc docs/framing-results.json docs/reliability.md

Replaces what stands between ``<!-- framing-matrix -->`` and
``<!-- /framing-matrix -->``; nothing there is typed by hand.
``tests/reliability/test_framing_doc.py`` checks that the page holds exactly
what the results file gives, and ``test_framing.py`` that the results file
holds what the servers answer today.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from .framing import BUDGET, PATHS
from .framing_cases import CASES, FAMILIES
from .hostile_doc import replace_between_markers

BEGIN = "<!-- framing-matrix -->"
END = "<!-- /framing-matrix -->"


def split(cell: str) -> tuple[str, list[str]]:
    """A cell's answer and its problems (what RFC 9112, or the innocent follower, found wrong)."""
    base, *problems = cell.split("; ")
    return base, problems


def family_cell(cells: dict[str, str], family: str) -> str:
    cases = [case for case in CASES if case.family == family]
    wrong = [(case.name, split(cells[case.name])[1]) for case in cases if split(cells[case.name])[1]]
    answers = Counter(split(cells[case.name])[0] for case in cases)
    text = ", ".join(f"{answer} ×{count}" if count > 1 else answer for answer, count in answers.items())
    if wrong:
        text = f"**{len(wrong)} of {len(cases)} wrong**; " + text
    return text


def render(results: dict[str, Any]) -> str:
    cells = results["cells"]
    names = [path.name for path in PATHS if path.name in cells]
    ours = {path.name for path in PATHS if path.ours}
    lines = [
        f"Measured by `{results['command']}` (and checked by every run of `tests/reliability/test_framing.py`). "
        f"Each case is sent on a fresh connection followed by an innocent `GET`; a cell gives the answer to the case "
        f"(`closed`: the server closed the connection after it; `no answer in {BUDGET:g} s`: neither an answer nor a close), "
        "and after a `;` what is wrong: the function ran on a refused or truncated body, the innocent request was lost "
        "or ran twice, a hidden request ran, a `500`, a `400` answered on a kept-open connection, or a leniency RFC 9112 "
        "does not allow. Paths marked * are funcwsgi's own framing, held to RFC 9112 by the tests; the others are the "
        "third-party server's parser, documented as it is.",
        "",
        "| Case family | " + " | ".join(f"{name}{' *' if name in ours else ''}" for name in names) + " |",
        "|---|" + "---|" * len(names),
    ]
    for family in FAMILIES:
        lines.append(f"| {family} | " + " | ".join(family_cell(cells[name], family) for name in names) + " |")
    lines += ["", "Every case, by name (`tests/reliability/framing_cases.py`):", ""]
    lines += ["| Case | Expected | " + " | ".join(names) + " |", "|---|---|" + "---|" * len(names)]
    for case in CASES:
        row = [_cell(cells[name][case.name]) for name in names]
        lines.append(f"| `{case.name}`: {case.what} | {case.expect} | " + " | ".join(row) + " |")
    lines += ["", "What the third-party servers get wrong, case by case:", ""]
    for name in names:
        if name in ours:
            continue
        wrong = [f"`{case.name}` ({'; '.join(split(cells[name][case.name])[1])})" for case in CASES if split(cells[name][case.name])[1]]
        lines.append(f"- **{name}**: " + ("; ".join(wrong) if wrong else "nothing") + ".")
    return "\n".join(lines) + "\n"


def _cell(cell: str) -> str:
    base, problems = split(cell)
    return base + "".join(f"; **{problem}**" for problem in problems)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python -m tests.reliability.framing_doc RESULTS.json RELIABILITY.md", file=sys.stderr)
        return 2
    results = json.loads(Path(argv[0]).read_text())
    page = Path(argv[1])
    page.write_text(replace_between_markers(page.read_text(), render(results), BEGIN, END))
    print(f"wrote the request-framing tables into {page}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
