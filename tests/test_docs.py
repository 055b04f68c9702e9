"""The documentation builds as a site with no broken link, and the README's links resolve."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from funcwsgi.stack import LAYERS, inner

from .support.paths import BIN, REPO
from .support.ports import free_port
from .support.processes import Server, base_env

MKDOCS = BIN / "mkdocs"
# The command `make docs` runs, minus the output folder.
BUILD = [str(MKDOCS), "build", "--strict"]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")



def build(root: Path, site: Path) -> subprocess.CompletedProcess[str]:
    assert MKDOCS.exists(), "mkdocs is not installed: `make setup` installs the docs extra"
    env = {"PATH": str(BIN) + ":/usr/bin:/bin", "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run([*BUILD, "--site-dir", str(site)], cwd=root, env=env, capture_output=True, text=True, timeout=120)


def test_make_docs_runs_mkdocs_strict():
    makefile = (REPO / "Makefile").read_text()
    recipe = makefile.split("\ndocs:", 1)[1].split("\n\n", 1)[0]
    assert "mkdocs build --strict" in recipe
    assert "--quiet" not in recipe, "--quiet hides the warnings --strict counts, so broken links would pass"


@pytest.mark.slow("builds the whole documentation site with mkdocs")
def test_the_site_builds_strictly(tmp_path):
    result = build(REPO, tmp_path / "site")
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tmp_path / "site" / "index.html").exists()
    assert (tmp_path / "site" / "architecture" / "index.html").exists()


@pytest.mark.slow("builds the whole documentation site with mkdocs")
def test_a_broken_link_fails_the_build(tmp_path):
    shutil.copytree(REPO / "docs", tmp_path / "docs")
    shutil.copy(REPO / "mkdocs.yml", tmp_path / "mkdocs.yml")
    with open(tmp_path / "docs" / "index.md", "a") as page:
        page.write("\nSee [the missing page](no-such-page.md).\n")
    result = build(tmp_path, tmp_path / "site")
    assert result.returncode != 0
    assert "no-such-page.md" in result.stdout + result.stderr


def test_the_readme_links_resolve():
    readme = (REPO / "README.md").read_text()
    targets = [t for t in LINK.findall(readme) if "://" not in t and not t.startswith("#")]
    assert targets, "the README links into docs/"
    missing = [t for t in targets if not (REPO / t.split("#")[0]).exists()]
    assert not missing, f"README.md links to missing files: {missing}"


def test_the_architecture_page_lists_every_layer_in_stack_order():
    page = (REPO / "docs" / "architecture.md").read_text()
    rows = re.findall(r"^\| `([a-z0-9-]+)` \|", page, flags=re.MULTILINE)
    names = [layer.name for layer in LAYERS] + ["function"]
    missing = [name for name in names if name not in rows]
    assert not missing, f"docs/architecture.md's layer table has no row for {missing}: add one where the layer sits in LAYERS"
    assert sorted(names, key=rows.index) == names, f"docs/architecture.md lists the layers as {rows}; LAYERS has {names}"


def reserved_routes_table() -> dict[str, str]:
    page = (REPO / "docs" / "handler-api.md").read_text()
    table = page.split("<!-- reserved-routes -->")[1]
    return dict(re.findall(r"^\| `(/[^`]*)` \| [^|]+ \| ([^|]+) \|$", table, flags=re.MULTILINE))


def test_the_reserved_routes_table_lists_every_path_the_runtime_answers():
    from werkzeug.test import Client

    from funcwsgi import make_app

    def main(req):
        return "the function"

    listed = reserved_routes_table()
    answered = {path for path in listed if Client(make_app(main, environ={})).get(path).text != "the function"}
    assert answered == set(listed), f"listed but reaching the function: {set(listed) - answered}"
    stack = make_app(main, environ={}).wsgi
    while not hasattr(stack, "routes"):
        stack = inner(stack)
    assert set(stack.routes) == set(listed), "docs/handler-api.md's reserved-routes table is the one list of the runtime's own paths"
    # The metrics row names the settings that move it and switch it off; each does what it says.
    assert "SERVER_METRICS_PATH" in listed["/metrics"] and "SERVER_METRICS=false" in listed["/metrics"]
    moved = Client(make_app(main, environ={"SERVER_METRICS_PATH": "/stats"}))
    assert moved.get("/metrics").text == "the function" and moved.get("/stats").text != "the function"
    assert Client(make_app(main, environ={"SERVER_METRICS": "false"})).get("/metrics").text == "the function"


# -- the pages' shell examples, run ---------------------------------------------------------
#
# A ```console block right after `<!-- runnable SETUP -->` is run: each `$ command` line in
# one bash session, and what it prints (stdout and stderr) must be the lines that follow it
# up to the next `$` line. In expected output, `...` stands for any text within a line, and
# a line that is only `...` for any number of lines. `8080` in a command stands for the
# test server's port (SERVER_PORT is set to a free one; SERVER_HOST to 127.0.0.1). A command
# ending in `&` runs in the background, its output kept apart; the session waits until
# SERVER_PORT answers /healthz before going on, and stops it at the end. SETUP says where:
#   function  a folder holding examples/hello/handler.py (the pages' `HANDLER_FOLDER=.`);
#   project   `funcwsgi create hello` done and `funcwsgi run --reload` running in it, as
#             getting-started's steps 1 and 2 leave it.
# A ```console block the test cannot run says why instead: `<!-- not runnable: REASON -->`.

EXAMPLE = re.compile(r"<!-- (runnable (?P<setup>[a-z]+)|not runnable: [^>]+) -->\n```console\n(?P<body>.*?)\n```\n", re.S)
CONSOLE = re.compile(r"```console\n")
PAGES = sorted((REPO / "docs").glob("*.md")) + [REPO / "README.md"]


def examples() -> list[tuple[str, str, str]]:
    found = []
    for page in PAGES:
        for match in EXAMPLE.finditer(page.read_text()):
            if match["setup"]:
                found.append((page.name, match["setup"], match["body"]))
    return found


def parse_session(body: str) -> list[tuple[str, list[str]]]:
    session: list[tuple[str, list[str]]] = []
    for line in body.splitlines():
        if line.startswith("$ "):
            session.append((line[2:], []))
        else:
            assert session, f"output before the first $ command:\n{body}"
            session[-1][1].append(line)
    return session


def output_pattern(expected: list[str]) -> re.Pattern[str]:
    parts = []
    for line in expected:
        if line == "...":
            parts.append(r"(?:[^\n]*\n)*?")
        else:
            parts.append(".*".join(re.escape(piece) for piece in line.split("...")) + r"\n")
    return re.compile("".join(parts))


def run_session(session: list[tuple[str, list[str]]], cwd: Path, env: dict[str, str], port: int) -> list[str]:
    """Each command's output, run in one bash session."""
    marker = "@@docs-example@@"
    lines = ["wait_ready() { for _ in $(seq 300); do curl -sf -o /dev/null \"localhost:$SERVER_PORT/healthz\" && return; sleep 0.1; done; }"]
    for number, (command, _) in enumerate(session):
        command = command.replace("8080", str(port))
        lines.append(f"status=$?; echo {marker}{number}; (exit $status)")  # `echo $?` sees the command's status
        if command.endswith("&"):
            lines += [f"{command[:-1]} > background-{number}.log 2>&1 &", "wait_ready"]
        else:
            lines.append(f"{command} 2>&1")
    lines.append(f"echo {marker}end; kill $(jobs -p) 2>/dev/null; wait")
    result = subprocess.run(["bash", "-c", "\n".join(lines)], cwd=cwd, env=env, capture_output=True, text=True, timeout=120, start_new_session=True)
    text = result.stdout
    outputs = []
    for number in range(len(session)):
        start = text.index(f"{marker}{number}\n") + len(f"{marker}{number}\n")
        end = text.index(f"{marker}{number + 1}\n" if number + 1 < len(session) else f"{marker}end\n")
        output = text[start:end]
        outputs.append(output if not output or output.endswith("\n") else output + "\n")  # a terminal's prompt would start the next line
    return outputs


def setup_folder(setup: str, scratch: Path, env: dict[str, str]) -> tuple[Path, Server | None]:
    if setup == "function":
        shutil.copy(REPO / "examples" / "hello" / "handler.py", scratch / "handler.py")
        return scratch, None
    assert setup == "project", f"unknown setup {setup!r}: function or project"
    created = subprocess.run([str(BIN / "funcwsgi"), "create", "hello"], cwd=scratch, env=env, capture_output=True, text=True, timeout=60)
    assert created.returncode == 0, created.stderr
    project = scratch / "hello"
    run = Server([str(BIN / "funcwsgi"), "run", "--reload"], env, 0, cwd=project)
    run.wait_for_output("Ctrl-C stops it", timeout=120)
    return project, run


@pytest.mark.parametrize(("page", "setup", "body"), examples(), ids=[f"{page}-{n}" for n, (page, _, _) in enumerate(examples())])
def test_the_pages_shell_examples_print_what_they_show(page, setup, body, tmp_path):
    port = free_port()
    env = base_env(SERVER_HOST="127.0.0.1", SERVER_PORT=str(port))
    env["PATH"] = f"{BIN}:/usr/bin:/bin"
    # curl shows a progress meter when its output is not a terminal; a reader's terminal shows none.
    (tmp_path / ".curlrc").write_text("silent\nshow-error\n")
    env["CURL_HOME"] = str(tmp_path)
    session = parse_session(body)
    cwd, running = setup_folder(setup, tmp_path, env)
    try:
        outputs = run_session(session, cwd, env, port)
    finally:
        if running is not None:
            running.stop()
    for (command, expected), output in zip(session, outputs, strict=True):
        assert output_pattern(expected).fullmatch(output), f"{page}: `$ {command}` printed\n{output}\ninstead of\n" + "\n".join(expected)


def test_every_console_block_is_run_or_says_why_not():
    for page in PAGES:
        text = page.read_text()
        blocks = len(CONSOLE.findall(text))
        decided = len(EXAMPLE.findall(text))
        assert blocks == decided, f"{page.name}: a ```console block without <!-- runnable SETUP --> or <!-- not runnable: why --> before it"


def test_the_example_runner_catches_a_wrong_output(tmp_path):
    session = parse_session("$ echo 27\n26")
    (output,) = run_session(session, tmp_path, base_env(), free_port())
    assert not output_pattern(session[0][1]).fullmatch(output)
    assert output_pattern(["HTTP 200 OK", "...", "Content-Length: ...", "..."]).fullmatch("HTTP 200 OK\nServer: x\nContent-Length: 26\n\nbody\n")


def test_every_test_a_migration_page_names_exists():
    """The migration tables name the test proving each row: the file and the test must be there."""
    root = Path(__file__).resolve().parent
    named = 0
    for page in sorted((root.parent / "docs").glob("migration-*.md")):
        current = None
        for match in re.finditer(r"`((?:[a-z_]+/)*test_[a-z0-9_]+\.py)(?:::([a-z0-9_]+))?`|`::([a-z0-9_]+)`", page.read_text()):
            current = match.group(1) or current
            name = match.group(2) or match.group(3)
            assert current is not None, f"{page.name}: `::{name}` before any test file"
            assert (root / current).is_file(), f"{page.name} names tests/{current}, which does not exist"
            if name:
                assert f"def {name}(" in (root / current).read_text(), f"{page.name} names {current}::{name}, which does not exist"
                named += 1
    assert named > 40


def opens_with_an_answer(lines: list[str]) -> bool:
    """Whether these lines, outside code fences, hold a table, a list, an image or a chart."""
    fenced = False
    for line in lines:
        if line.startswith("```"):
            if not fenced and line.strip() == "```mermaid":
                return True
            fenced = not fenced
            continue
        if fenced:
            continue
        if re.match(r"\|?\s*:?-{3,}:?\s*\|", line) or re.match(r"([-*]|\d+\.) \S", line) or "![" in line:
            return True
    return False


def test_every_long_page_opens_with_its_answer():
    """A page over 200 lines shows what a reader came for within its first 30 lines.

    The heuristic: outside code fences, the first 30 lines hold a Markdown table (its
    `|---|` separator row), a list item (`- `, `* ` or `1. ` at the start of a line), an
    image (`![`) or a chart (a ```mermaid block). Prose alone, or a code sample alone,
    fails: the method and the background go after the answer, not before it.
    """
    long = [p for p in sorted((REPO / "docs").glob("*.md")) if len(p.read_text().splitlines()) > 200]
    assert long, "no page over 200 lines: the rule checks nothing"
    buried = [p.name for p in long if not opens_with_an_answer(p.read_text().splitlines()[:30])]
    assert not buried, f"these pages (over 200 lines) open with no table, list, image or chart in their first 30 lines: {buried}"


def test_the_opening_check_tells_prose_from_an_answer():
    prose = ["# A page", "", "Some words about the method.", "```", "- not a list, code", "```"]
    assert not opens_with_an_answer(prose)
    assert opens_with_an_answer([*prose, "| a | b |", "|---|---|", "| 1 | 2 |"])
    assert opens_with_an_answer([*prose, "- a point"])
    assert opens_with_an_answer([*prose, "```mermaid", "flowchart LR", "```"])
