"""The documentation builds as a site with no broken link, and the README's links resolve."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from funcwsgi.stack import LAYERS

from .servers import BIN, REPO

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


def test_the_site_builds_strictly(tmp_path):
    result = build(REPO, tmp_path / "site")
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tmp_path / "site" / "index.html").exists()
    assert (tmp_path / "site" / "architecture" / "index.html").exists()


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
    rows = re.findall(r"^\| `([a-z-]+)` \|", page, flags=re.MULTILINE)
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
        stack = stack.app
    assert set(stack.routes) == set(listed), "docs/handler-api.md's reserved-routes table is the one list of the runtime's own paths"
    # The metrics row names the settings that move it and switch it off; each does what it says.
    assert "SERVER_METRICS_PATH" in listed["/metrics"] and "SERVER_METRICS=false" in listed["/metrics"]
    moved = Client(make_app(main, environ={"SERVER_METRICS_PATH": "/stats"}))
    assert moved.get("/metrics").text == "the function" and moved.get("/stats").text != "the function"
    assert Client(make_app(main, environ={"SERVER_METRICS": "false"})).get("/metrics").text == "the function"
