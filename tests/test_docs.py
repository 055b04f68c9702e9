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
