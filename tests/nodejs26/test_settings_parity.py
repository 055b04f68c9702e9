"""The two runtimes read the same settings: names, defaults and aliases.

funcwsgi declares its settings in ``funcwsgi/config/all_settings.py``, the nodejs26 runtime in
``nodejs26/lib/config.js``; ``node nodejs26/lib/settings-list.js`` prints the
latter as JSON. Any difference fails this test unless :data:`INTENDED` lists it
with the reason (docs/nodejs26.md shows the same list).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from funcwsgi.config import specs

REPO = Path(__file__).resolve().parents[2]
NODE = REPO / ".tools" / "node" / "node_modules" / ".bin" / "node"
LISTER = REPO / "nodejs26" / "lib" / "settings-list.js"

#: (setting, what differs) -> why. What differs: "default", "aliases", "python only", "node only".
INTENDED: dict[tuple[str, str], str] = {
    ("FUNC_RUNTIME", "default"): "each runtime reports its own name (python314, nodejs26)",
    ("SERVER_ADAPTER", "default"): "Node has one server, node:http ('node'); gunicorn, waitress, werkzeug, granian and kafka are Python's",
    ("SERVER_MAX_BODY_SIZE", "aliases"): "nodejs26 also reads REQ_MB_LIMIT, the name Kyma's nodejs20-24 runtimes used",
    # Platforms whose contracts only the Python runtime has (docs/platforms.md); nodejs26's are in lib/platforms/.
    ("SERVER_HOST", "aliases"): "LISTEN_ADDRESS is Knative func-python's, a Python platform's signal",
    ("SERVER_PORT", "aliases"): "RUNTIME_PORT, LISTEN_ADDRESS and upstream_url are Fission's, Knative's and OpenFaaS's Python contracts'",
    ("HANDLER_FOLDER", "aliases"): "nodejs26 also reads AzureWebJobsScriptRoot, where the Azure Functions host says a Node.js app is",
    # Node serves every call on its event loop already; the choice and its watch are the Python loop path's.
    ("SERVER_EVENT_LOOP", "python only"): "Node always serves on its event loop",
    ("SERVER_LOOP_BLOCKED_SECONDS", "python only"): "nodejs26 watches its loop with its own monitor (docs/nodejs26.md)",
    ("SERVER_GC_THRESHOLD", "python only"): "CPython's cycle collector; V8 collects garbage its own way",
}
#: Other platforms' own variables, read by their Python contracts (docs/platforms.md).
OTHER_PLATFORMS_ALIASES = {"RUNTIME_PORT", "LISTEN_ADDRESS", "upstream_url"}
PLATFORM_PREFIXES = ("AWS_", "LAMBDA_", "FISSION_", "FUNCTIONS_WORKER_RUNTIME", "KNATIVE_", "OPENFAAS_")
#: The Kafka event trigger is a Python server adapter (SERVER_ADAPTER=kafka); nodejs26 has none.
PYTHON_ONLY_PREFIXES = ("KAFKA_",)


def node_settings() -> list[dict[str, Any]]:
    assert NODE.exists(), f"no Node 26 at {NODE}: run 'make setup'"
    result = subprocess.run([str(NODE), str(LISTER)], capture_output=True, text=True, timeout=60, check=True)
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def comparable(value: Any) -> Any:
    """A default as JSON shows it: tuples are lists, integers and floats one kind of number."""
    if isinstance(value, tuple):
        return [comparable(item) for item in value]
    if isinstance(value, dict):
        return {key: comparable(item) for key, item in value.items()}
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return value


def python_settings() -> dict[str, dict[str, Any]]:
    return {
        spec.env: {"default": comparable(default), "aliases": [alias.name for alias in spec.aliases]}
        for _, default, spec in specs()
    }


def differences() -> dict[tuple[str, str], str]:
    python = python_settings()
    node = {item["env"]: {"default": comparable(item["default"]), "aliases": [a["name"] for a in item["aliases"]]} for item in node_settings()}
    found: dict[tuple[str, str], str] = {}
    for name in sorted(set(python) | set(node)):
        if name not in node:
            found[(name, "python only")] = ""
        elif name not in python:
            found[(name, "node only")] = ""
        else:
            for aspect in ("default", "aliases"):
                if python[name][aspect] != node[name][aspect]:
                    found[(name, aspect)] = f"python {python[name][aspect]!r}, node {node[name][aspect]!r}"
    return found


def test_every_difference_is_intended() -> None:
    unexplained = {
        key: detail
        for key, detail in differences().items()
        if key not in INTENDED and not (key[1] == "python only" and key[0].startswith(PYTHON_ONLY_PREFIXES + PLATFORM_PREFIXES))
    }
    assert unexplained == {}, "settings that differ between funcwsgi and nodejs26 without a reason in INTENDED"


def test_every_intended_difference_still_exists() -> None:
    found = differences()
    stale = [key for key in INTENDED if key not in found]
    assert stale == [], "INTENDED lists differences that are gone; remove them"


@pytest.mark.parametrize("name", ["SERVER_PORT", "SERVER_CALL_TIMEOUT", "SERVER_MAX_BODY_SIZE", "HANDLER_FOLDER", "HANDLER_MODULE_NAME", "HANDLER_FUNCTION_NAME"])
def test_the_kyma_names_are_read_by_both(name: str) -> None:
    node = {item["env"]: item for item in node_settings()}
    python_aliases = set(python_settings()[name]["aliases"]) - OTHER_PLATFORMS_ALIASES
    node_aliases = [alias["name"] for alias in node[name]["aliases"]]
    assert python_aliases <= set(node_aliases)


def test_node_lists_every_setting_with_what_is_expected() -> None:
    for item in node_settings():
        assert item["description"] and item["expected"], item["env"]
