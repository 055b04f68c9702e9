"""Reading what servers log: the JSON records in an output, the lines of a JSON-lines file.

Standard library only (the conformance kit uses it).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def log_records(output: str) -> list[dict[str, Any]]:
    """The JSON records among an output's lines (start-up banners and other plain lines left out)."""
    found = []
    for line in output.splitlines():
        if line.startswith("{"):
            try:
                found.append(json.loads(line))
            except ValueError:
                pass
    return found


def json_lines(path: Path) -> list[Any]:
    """Each non-empty line of a JSON-lines file, parsed; none while the file does not exist yet."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
