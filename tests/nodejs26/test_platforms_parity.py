"""The two runtimes recognise a platform from the same host variables.

funcwsgi declares its platforms in ``funcwsgi/compat/__init__.py`` (``PLATFORMS``),
nodejs26 in ``nodejs26/lib/platforms/registry.js``; ``node
nodejs26/lib/platforms/list.js`` prints the latter as JSON, with the platform each
variable alone makes nodejs26 choose. Where both runtimes support a platform, the
names, the variables and the template are the same, and each variable alone
chooses that platform in both.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from funcwsgi.compat import PLATFORMS, recognise
from funcwsgi.config import Config

REPO = Path(__file__).resolve().parents[2]
NODE = REPO / ".tools" / "node" / "node_modules" / ".bin" / "node"
LISTER = REPO / "nodejs26" / "lib" / "platforms" / "list.js"

#: Platforms only nodejs26 has -> why.
NODE_ONLY: dict[str, str] = {
    "functions-framework": "the Python side serves Functions Framework functions by their imports (funcwsgi/compat/functions_framework.py), not as a platform",
}
#: The value a variable needs to mark the platform in Python, where any value will not do.
PYTHON_VALUES = {"FUNCTIONS_WORKER_RUNTIME": "python"}


def node_platforms() -> dict[str, dict[str, Any]]:
    assert NODE.exists(), f"no Node 26 at {NODE}: run 'make setup'"
    result = subprocess.run([str(NODE), str(LISTER)], capture_output=True, text=True, timeout=60, check=True, cwd="/")
    return {item["name"]: item for item in json.loads(result.stdout)}


@pytest.fixture(scope="module")
def node() -> dict[str, dict[str, Any]]:
    return node_platforms()


def shared(node: dict[str, dict[str, Any]]) -> list[str]:
    return [name for name, item in node.items() if item["module"] and PLATFORMS.get(name) and PLATFORMS[name].module]


def test_every_node_platform_is_a_python_platform_or_explained(node):
    assert sorted(name for name in node if name not in PLATFORMS and name not in NODE_ONLY) == []


def test_shared_platforms_exist(node):
    assert "aws-lambda" in shared(node)


def test_the_same_variables_and_templates(node):
    for name in shared(node):
        assert sorted(node[name]["variables"]) == sorted(PLATFORMS[name].variables), name
        assert node[name]["template"] == PLATFORMS[name].template, name


def test_each_variable_alone_chooses_its_platform_in_both(node):
    for name in shared(node):
        for variable in PLATFORMS[name].variables:
            assert recognise(Config.from_env({variable: PYTHON_VALUES.get(variable, "x")}))[0] == name, (name, variable)
            assert node[name]["recognisedFrom"][variable] == name, (name, variable)


def test_platforms_without_a_contract_are_recognised_by_neither(node):
    for name, item in node.items():
        if not item["module"]:
            assert item["variables"] == [], name
