"""The layout's rules (docs/architecture.md), read from the source.

- no import circle among ``funcwsgi`` and ``sdk``, counting every
  import: module level, inside functions and under ``TYPE_CHECKING``;
- the core (``funcwsgi`` outside its wings ``cli/``, ``compat/`` and
  ``devtools/``) imports no module of the wings, except ``funcwsgi.compat``
  itself, the one place that chooses a contract (and ``funcwsgi.__main__``,
  which is the CLI's entry point), and no module of ``funcwsgi/adapters/``
  but one: ``funcwsgi.adapters.specs``, the table of data that says what each
  server can do, which the configuration checks settings against and the
  server interface (``funcwsgi.serving``) reads to find a server run by its
  own command;
- nothing outside ``funcwsgi.cli`` imports the CLI;
- the top level of ``funcwsgi/`` is the request's path: at most
  ``CORE_LIMIT`` modules, each named in docs/architecture.md. The only other
  modules there are the public names in ``PUBLIC_NAMES``: a docstring and a
  re-export of one module that lives in a wing or in ``funcwsgi/adapters/``, nothing
  else, and not counted. Our own code imports the module itself, never its
  public name;
- and, from a real server: a plain function's process never imports what it
  does not use (OpenTelemetry without a collector, CloudEvents, Kafka, the
  other platforms' contracts, the CLI beyond ``serve``).
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support.processes import FUNCWSGI, Server, children, http_get, start

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("funcwsgi", "sdk")
#: The servers' package: it serves the core, and the core never imports it.
ADAPTERS = "funcwsgi.adapters"
#: The one adapter module the core may import: data only (what each server can do), importing nothing of ours.
ADAPTER_TABLE = "funcwsgi.adapters.specs"
CHOOSING_PLACE = "funcwsgi.compat"
CLI_ENTRY = "funcwsgi.__main__"
WINGS = ("funcwsgi.cli", "funcwsgi.compat", "funcwsgi.devtools")
#: Public import paths kept where users know them, for modules that are not on the request's path.
PUBLIC_NAMES = {
    "funcwsgi.testing": "funcwsgi.devtools.function_client",  # from funcwsgi.testing import FunctionClient
    "funcwsgi.gunicorn_conf": "funcwsgi.adapters.gunicorn_conf",  # gunicorn -c python:funcwsgi.gunicorn_conf funcwsgi:app
}
#: Python files the top level of funcwsgi/ may hold, every one counted (issue 45: at most 16).
TOP_LEVEL_LIMIT = 16
#: Of those, the request-path modules: the rest are __init__, __main__ and the public names.
CORE_LIMIT = TOP_LEVEL_LIMIT - 2 - len(PUBLIC_NAMES)
ARCHITECTURE = REPO / "docs" / "architecture.md"


def modules() -> dict[str, Path]:
    """Dotted name -> source file of every module of both packages (templates excluded)."""
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
    return any(name == wing or name.startswith(wing + ".") for wing in WINGS)


def is_adapter(name: str) -> bool:
    return name == ADAPTERS or name.startswith(ADAPTERS + ".")


def is_core(name: str) -> bool:
    return name.startswith("funcwsgi") and not is_wing(name) and not is_adapter(name) and name != CLI_ENTRY and name not in PUBLIC_NAMES


def test_the_graph_sees_the_imports(graph):
    # The rule below is only as good as the graph: it must see relative, absolute and nested imports.
    assert "funcwsgi.stack" in graph["funcwsgi.application"]
    assert "funcwsgi.compat" in graph["funcwsgi.handler.calling"]
    assert "funcwsgi.compat.flask" in graph["funcwsgi.compat"]  # imported inside a function
    assert "funcwsgi.config" in graph[ADAPTERS]  # under TYPE_CHECKING
    assert ADAPTER_TABLE in graph["funcwsgi.config.all_settings"]
    assert graph["funcwsgi.testing"] == {"funcwsgi.devtools.function_client"}
    assert graph["funcwsgi.gunicorn_conf"] == {"funcwsgi.adapters.gunicorn_conf"}


def test_no_import_circle(graph):
    assert circles(graph) == []


def test_circles_are_found():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def core_imports(graph: dict[str, set[str]], of: Callable[[str], bool], but: str) -> list[tuple[str, str]]:
    """(core module, target) for every import of the core into what ``of`` names, ``but`` the one allowed."""
    return [(name, target) for name, targets in graph.items() if is_core(name) for target in targets if of(target) and target != but]


def test_the_core_reaches_the_wings_only_through_the_choosing_place(graph):
    assert core_imports(graph, is_wing, but=CHOOSING_PLACE) == []


def test_the_core_imports_no_adapter(graph):
    # The adapters serve the core; gunicorn's settings module is an adapter's, under a public name.
    assert core_imports(graph, is_adapter, but=ADAPTER_TABLE) == []


def test_the_adapter_table_is_data_only(graph):
    # Importing it must not pull an adapter (nor a server) into the core.
    assert graph[ADAPTER_TABLE] == set()


def test_only_the_cli_imports_the_cli(graph):
    outside = [
        (name, target)
        for name, targets in graph.items()
        if not name.startswith("funcwsgi.cli") and name != CLI_ENTRY
        for target in targets
        if target.startswith("funcwsgi.cli")
    ]
    assert outside == []


def top_level_core() -> list[str]:
    return sorted(
        path.stem
        for path in (REPO / "funcwsgi").glob("*.py")
        if path.stem not in ("__init__", "__main__") and f"funcwsgi.{path.stem}" not in PUBLIC_NAMES
    )


def test_the_top_level_holds_the_request_path_only():
    core = top_level_core()
    assert len(core) <= CORE_LIMIT, core
    every = sorted(path.name for path in (REPO / "funcwsgi").glob("*.py"))
    assert len(every) <= TOP_LEVEL_LIMIT, every
    assert all((REPO / f"{name.replace('.', '/')}.py").is_file() for name in PUBLIC_NAMES)


def test_the_architecture_page_names_the_top_level_core_exactly():
    """The core's box in docs/architecture.md lists the top level's request-path modules, and no public name."""
    box = re.search(r'top\["(?P<names>[^"]*)"\]', ARCHITECTURE.read_text(encoding="utf-8"))
    assert box, "docs/architecture.md lost the core's box (top[...])"
    named = sorted(name.strip() for name in re.split(r"·|<br/>", box["names"]) if name.strip())
    assert named == top_level_core()


def public_name_problems(name: str, path: Path, target: str) -> list[str]:
    """What in a public-name module is more than a docstring, a re-export of ``target`` and ``__all__``."""
    package = name.rpartition(".")[0]
    problems = []
    for index, node in enumerate(ast.parse(path.read_text(encoding="utf-8"), str(path)).body):
        if index == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            continue
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                module = ".".join([*package.split(".")[: len(package.split(".")) - (node.level - 1)], module])
            if module == target:
                continue
            problems.append(f"line {node.lineno}: imports {module}, not {target}")
        elif isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["__all__"]:
            continue
        else:
            problems.append(f"line {node.lineno}: {type(node).__name__}")
    return problems


@pytest.mark.parametrize("name", sorted(PUBLIC_NAMES))
def test_a_public_name_only_re_exports_its_module(name):
    target = PUBLIC_NAMES[name]
    assert not is_core(target) and (is_wing(target) or is_adapter(target)), target
    assert public_name_problems(name, modules()[name], target) == []


def test_a_public_name_with_logic_of_its_own_is_caught(tmp_path):
    shim = tmp_path / "shim.py"
    shim.write_text('"""Doc."""\n\nfrom .devtools.function_client import FunctionClient\n\n__all__ = ["FunctionClient"]\n')
    assert public_name_problems("funcwsgi.shim", shim, "funcwsgi.devtools.function_client") == []
    shim.write_text('"""Doc."""\n\nfrom .devtools.function_client import FunctionClient\nfrom .config import Config\nDEFAULT = Config()\n')
    assert public_name_problems("funcwsgi.shim", shim, "funcwsgi.devtools.function_client") == [
        "line 4: imports funcwsgi.config, not funcwsgi.devtools.function_client",
        "line 5: Assign",
    ]


def test_our_code_imports_the_module_not_its_public_name(graph):
    users = [(name, target) for name, targets in graph.items() for target in targets if target in PUBLIC_NAMES]
    assert users == []


# -- what starting a plain function loads -------------------------------------------------

#: Modules a plain function's server never needs (issue 44): OpenTelemetry without a collector, CloudEvents
#: until an event arrives, Kafka, the other platforms' contracts, the CLI beyond parsing `serve`, HTTP/2 until
#: a client speaks it, a JSON-logging library. Each with its submodules.
NEVER_LOADED = (
    "opentelemetry",
    "cloudevents",
    "funcwsgi.cloudevents",
    "funcwsgi.kafka",
    "funcwsgi.adapters.kafka",
    "confluent_kafka",
    "funcwsgi.devtools",
    "yaml",
    "h2.connection",  # not "h2" itself: gunicorn's settings check imports it for its version
    "hpack",
    "hyperframe",
    "funcwsgi.adapters.gunicorn.http2",
    "pythonjsonlogger",  # the JSON log lines are funcwsgi's own formatter's
    "werkzeug",  # until the function reads its request or makes a werkzeug object
)
#: The compat package chooses the contract from these alone; every other module of it is a contract.
COMPAT_RECOGNITION = {"funcwsgi.compat", "funcwsgi.compat.signals", "funcwsgi.compat.sources"}
#: What `funcwsgi serve` needs of the CLI: its parser and the serve command.
CLI_FOR_SERVE = {"funcwsgi.cli", "funcwsgi.cli.commands", "funcwsgi.cli.commands.serve"}


def needless(loaded: list[str]) -> list[str]:
    """The modules of ``loaded`` that a plain function's server should not have imported."""
    return [
        name
        for name in loaded
        if name in NEVER_LOADED or name.startswith(tuple(f"{package}." for package in NEVER_LOADED))
        or (name.startswith("funcwsgi.compat") and name not in COMPAT_RECOGNITION)
        or (name.startswith("funcwsgi.cli") and name not in CLI_FOR_SERVE)
    ]


def test_needless_names_what_it_should():
    assert needless(["funcwsgi.compat", "funcwsgi.compat.signals", "funcwsgi.cli.commands.serve", "json", "werkzeugs"]) == []
    loaded = ["funcwsgi.compat.azure", "funcwsgi.cli.commands.build", "opentelemetry.trace", "funcwsgi.cloudevents", "yaml", "h2.connection", "werkzeug.wrappers"]
    assert needless(loaded) == loaded
    assert needless(["funcwsgi.adapters.gunicorn.http2_on_demand", "h2c_helpers"]) == []  # a name that only begins alike


@pytest.fixture(scope="module", params=["gunicorn", "granian"])
def plain_server(request: pytest.FixtureRequest) -> Iterator[Server]:
    """`funcwsgi serve` with the default settings serving a plain function that lists its process's modules."""
    with start(FUNCWSGI + ["serve"], "modules_loaded", SERVER_ADAPTER=request.param) as server:
        yield server


def served_modules(server: Server) -> list[str]:
    """What the process answering ``server``'s call has imported, as the function tells."""
    status, body = http_get(server.host, server.port, "/")
    assert status == 200
    return body.decode().split("\n")


@pytest.mark.slow("starts a real server on each adapter")
def test_a_plain_function_loads_only_what_it_uses(plain_server):
    """Asked by the function itself what its process has imported."""
    loaded = served_modules(plain_server)
    assert "funcwsgi.handler.calling" in loaded  # the function really answered from the serving process
    assert needless(loaded) == [], f"a plain function's server imported {needless(loaded)}"


@pytest.mark.parametrize("plain_server", ["granian"], indirect=True)
def test_granian_never_imports_gunicorn(plain_server):
    """gunicorn's package (its config, arbiter, argparse, email) was a fifth of a start on granian (issue 44)."""
    loaded = served_modules(plain_server)
    assert "granian" in loaded
    assert [name for name in loaded if name == "gunicorn" or name.startswith(("gunicorn.", "funcwsgi.adapters.gunicorn."))] == []


#: What gunicorn's own logger class imports for options `funcwsgi serve` never sets (log files, syslog, logging
#: configuration files): 18 million instructions of a start. `funcwsgi serve` gives gunicorn funcwsgi's instead.
GUNICORN_LOGGING = ("gunicorn.glogging", "logging.config", "logging.handlers", "socketserver")


@pytest.mark.parametrize("plain_server", ["gunicorn"], indirect=True)
def test_serve_on_gunicorn_never_imports_gunicorns_logging(plain_server):
    loaded = served_modules(plain_server)
    assert "funcwsgi.adapters.gunicorn.server_log" in loaded
    assert [name for name in GUNICORN_LOGGING if name in loaded] == []


def shared_objects(pid: int) -> set[str]:
    """The shared libraries and extension modules mapped into process ``pid``."""
    maps = Path(f"/proc/{pid}/maps").read_text().splitlines()
    return {line.split(None, 5)[5] for line in maps if line.count(" ") >= 5 and re.search(r"\.so(\.|$)", line.split(None, 5)[-1])}


@pytest.mark.parametrize("plain_server", ["gunicorn"], indirect=True)
def test_a_gunicorn_worker_loads_no_extension_module_after_the_fork(plain_server):
    """What the master loaded before forking, each worker shares; what a worker loads itself costs it resident memory.

    An extension module imported after the fork maps the pages of its initialisation code into every worker
    (uvloop's: about 0.4 MB of 28, docs/performance.md#memory); imported in the master, no worker runs that code.
    """
    assert http_get(plain_server.host, plain_server.port, "/")[0] == 200  # the worker has booted and served
    master = plain_server.process.pid
    workers = children(master)
    assert workers, "no worker process"
    for worker in workers:
        assert sorted(shared_objects(worker) - shared_objects(master)) == []


#: Methods ``dataclasses`` may compile for funcwsgi's modules while a plain function's gunicorn worker is set up (issue 44): each
#: frozen dataclass compiles six at import, about 4 million instructions in all, so the records on the
#: start path are NamedTuples or classes with their own methods. Raise it only for a dataclass that pays.
GENERATED_METHODS_BUDGET = 0

COUNT_GENERATED = """
import builtins, json, os, sys
generated = []
real_exec = builtins.exec
def counting_exec(source, *args, **kwargs):
    if isinstance(source, str) and sys._getframe(1).f_code.co_filename.endswith("dataclasses.py"):
        frame = sys._getframe(1)
        while frame.f_globals.get("__name__") == "dataclasses":
            frame = frame.f_back
        generated.append(frame.f_globals.get("__name__", "?"))
    return real_exec(source, *args, **kwargs)
builtins.exec = counting_exec
import funcwsgi
funcwsgi.app
import funcwsgi.adapters.gunicorn.worker
print(json.dumps(generated))
"""


def test_starting_compiles_few_generated_methods():
    env = {"HANDLER_FOLDER": str(REPO / "tests" / "functions" / "modules_loaded"), "PATH": ""}
    result = subprocess.run([sys.executable, "-c", COUNT_GENERATED], env=env, capture_output=True, text=True, timeout=60, check=True)
    generated = [name for name in json.loads(result.stdout.splitlines()[-1]) if name.startswith("funcwsgi")]  # not werkzeug's own
    by_module = {name: generated.count(name) for name in sorted(set(generated))}
    assert len(generated) <= GENERATED_METHODS_BUDGET, f"dataclasses compiled {len(generated)} methods at start: {by_module}"
