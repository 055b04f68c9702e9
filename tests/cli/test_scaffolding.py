from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from funcwsgi.cli import scaffolding
from funcwsgi.cli.project import ProjectError, load_project, render_func_yaml


@pytest.fixture
def project(tmp_path: Path):
    root = tmp_path / "fn"
    root.mkdir()
    (root / "func.yaml").write_text(render_func_yaml("fn", "http"))
    (root / "handler.py").write_text("def main(req, res):\n    pass\n")
    return load_project(root)


def test_claim_takes_the_lowest_free_index_under_concurrency(tmp_path: Path):
    base = tmp_path / "runs"
    claimed: list[Path] = []
    lock = threading.Lock()

    def take():
        folder = scaffolding.claim(base)
        with lock:
            claimed.append(folder)

    threads = [threading.Thread(target=take) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(int(folder.name) for folder in claimed) == list(range(8))
    scaffolding.remove(base / "3")
    assert scaffolding.claim(base).name == "3"


def test_write_links_the_project_and_remove_never_follows_the_link(project):
    folder = scaffolding.claim(project.func_dir / "runs")
    written = scaffolding.write(project, folder)
    assert {path.name for path in written} == {"Dockerfile", "build.sh", "run.sh", "service.py", "gunicorn.conf.py", "f"}
    assert os.readlink(folder / "f") == "../../.."
    assert (folder / "f" / "handler.py").read_text() == "def main(req, res):\n    pass\n"
    scaffolding.remove(folder)
    assert not folder.exists()
    assert (project.root / "handler.py").exists() and (project.root / "func.yaml").exists()


def test_missing_template_folder_names_the_key(project, tmp_path: Path):
    (project.root / "func.yaml").write_text(render_func_yaml("fn", str(tmp_path / "gone")))
    with pytest.raises(ProjectError, match=r"func.yaml: template: template '.*gone' is neither a built-in template"):
        scaffolding.write(load_project(project.root), tmp_path / "out")
