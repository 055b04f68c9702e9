"""Scaffolding: the few files that turn a function into a service.

The scaffolding is an entry module (``service.py``) that hands the function to
the runtime library, ``run.sh`` and ``build.sh`` (so the CLI only ever runs
scripts, whatever the language), a ``Dockerfile`` FROM the runtime image and a
``gunicorn.conf.py``. It reaches the function through a link ``f`` to the
project's folder, never a copy. ``run`` and ``build`` write it into
``.func/runs/N`` and ``.func/build/N`` (the lowest free N, so concurrent
commands never share one) and remove it when they end; ``scaffold`` writes it
into ``./dist`` for the user to own.

A template may ship a ``scaffolding/`` folder; its files replace (or add to)
the default ones, file by file.
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

from .. import __version__
from .project import Project, ProjectError

DATA = Path(__file__).resolve().parent / "data"
DEFAULT_SCAFFOLDING = DATA / "scaffolding"
TEMPLATES = DATA / "templates"
BUILTIN_TEMPLATES = ("http", "cloudevent")
EXECUTABLES = frozenset({"run.sh", "build.sh"})
LINK = "f"
RUNTIME_IMAGE = f"funcwsgi-runtime:{__version__}"
_PLACEHOLDERS = {"{{funcwsgi_version}}": __version__}


def template_dir(template: str) -> Path:
    """The folder of a built-in template (``http``, ``cloudevent``) or a template folder path."""
    if template in BUILTIN_TEMPLATES:
        return TEMPLATES / template
    folder = Path(template).expanduser()
    if not folder.is_dir():
        raise ProjectError(
            f"template {template!r} is neither a built-in template ({', '.join(BUILTIN_TEMPLATES)}) nor a folder"
        )
    return folder.resolve()


def scaffolding_files(project: Project) -> dict[str, Path]:
    """File name -> source, the template's own scaffolding winning over the default."""
    files = {path.name: path for path in sorted(DEFAULT_SCAFFOLDING.iterdir()) if path.is_file()}
    try:
        own = template_dir(project.template) / "scaffolding"
    except ProjectError as error:
        raise ProjectError(f"{project.root / 'func.yaml'}: template: {error}") from None
    if own.is_dir():
        files.update({path.name: path for path in sorted(own.iterdir()) if path.is_file()})
    return files


def claim(base: Path) -> Path:
    """Create and return ``base/N`` for the lowest free N; ``mkdir`` makes the claim atomic."""
    base.mkdir(parents=True, exist_ok=True)
    index = 0
    while True:
        candidate = base / str(index)
        try:
            candidate.mkdir()
        except FileExistsError:
            index += 1
            continue
        return candidate


def write(project: Project, destination: Path, *, overwrite: bool = False) -> list[Path]:
    """Write the scaffolding into ``destination`` with the link ``f`` to the project.

    Refuses to replace existing files (naming them) unless ``overwrite``.
    Returns the paths written.
    """
    files = scaffolding_files(project)
    targets = [destination / name for name in files] + [destination / LINK]
    existing = [path for path in targets if os.path.lexists(path)]
    if existing and not overwrite:
        names = ", ".join(str(path) for path in existing)
        raise ProjectError(f"{names} already exist; pass --force to replace them")
    destination.mkdir(parents=True, exist_ok=True)
    written = []
    for name, source in files.items():
        target = destination / name
        text = source.read_text(encoding="utf-8")
        for placeholder, value in _PLACEHOLDERS.items():
            text = text.replace(placeholder, value)
        if os.path.lexists(target):
            target.unlink()
        target.write_text(text, encoding="utf-8")
        if name in EXECUTABLES:
            target.chmod(target.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        written.append(target)
    link = destination / LINK
    if os.path.lexists(link):
        link.unlink()
    link.symlink_to(os.path.relpath(project.root, destination), target_is_directory=True)
    written.append(link)
    return written


def remove(folder: Path) -> None:
    """Remove a ``.func/runs/N`` or ``.func/build/N`` folder; the link ``f`` is unlinked, never followed."""
    link = folder / LINK
    if link.is_symlink():
        link.unlink()
    shutil.rmtree(folder, ignore_errors=True)
