"""The import rule of the layout (docs/architecture.md), read from the source.

- no import circle among ``funcwsgi``, ``sdk`` and ``adapters``, counting every
  import: module level, inside functions and under ``TYPE_CHECKING``;
- the core (``funcwsgi`` outside ``cli/`` and ``compat/``) imports no module of
  the wings, except ``funcwsgi.compat`` itself, the one place that chooses a
  contract (and ``funcwsgi.__main__``, which is the CLI's entry point);
- nothing outside ``funcwsgi.cli`` imports the CLI.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("funcwsgi", "sdk", "adapters")
CHOOSING_PLACE = "funcwsgi.compat"
CLI_ENTRY = "funcwsgi.__main__"


def modules() -> dict[str, Path]:
    """Dotted name -> source file of every module of the three packages (templates excluded)."""
    found = {}
    for package in PACKAGES:
        for path in (REPO / package).rglob("*.py"):
            parts = list(path.relative_to(REPO).with_suffix("").parts)
            if "data" in parts:
                continue  # templates and scaffolding written into users' projects
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def imports_of(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The modules of ours that ``name`` imports anywhere in its source."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            for alias in node.names:
                submodule = f"{module}.{alias.name}"
                targets.add(submodule if submodule in known else module)
    return {target for target in targets if target in known and target != name}


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imports_of(name, path, known) for name, path in known.items()}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return found


def is_wing(name: str) -> bool:
    return name.startswith(("funcwsgi.cli", "funcwsgi.compat"))


def test_the_graph_sees_the_imports(graph):
    # The rule below is only as good as the graph: it must see relative, absolute and nested imports.
    assert "funcwsgi.stack" in graph["funcwsgi.application"]
    assert "funcwsgi.compat" in graph["funcwsgi.function_app"]
    assert "funcwsgi.compat.flask" in graph["funcwsgi.compat"]  # imported inside a function
    assert "funcwsgi.config" in graph["adapters"]


def test_no_import_circle(graph):
    assert circles(graph) == []


def test_circles_are_found():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_the_core_reaches_the_wings_only_through_the_choosing_place(graph):
    crossings = [
        (name, target)
        for name, targets in graph.items()
        if name.startswith("funcwsgi") and not is_wing(name) and name != CLI_ENTRY
        for target in targets
        if is_wing(target) and target != CHOOSING_PLACE
    ]
    assert crossings == []


def test_only_the_cli_imports_the_cli(graph):
    outside = [
        (name, target)
        for name, targets in graph.items()
        if not name.startswith("funcwsgi.cli") and name != CLI_ENTRY
        for target in targets
        if target.startswith("funcwsgi.cli")
    ]
    assert outside == []


def test_the_top_level_holds_the_core_only():
    top = sorted(path.stem for path in (REPO / "funcwsgi").glob("*.py") if path.stem not in ("__init__", "__main__"))
    assert len(top) <= 18, top
