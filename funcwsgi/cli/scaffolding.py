"""Scaffolding: the few files that turn a function into a service.

The scaffolding is an entry module (``service.py``) that hands the function to
the runtime library, ``run.sh`` and ``build.sh`` (so the CLI only ever runs
scripts, whatever the language), a ``Dockerfile`` FROM the runtime image and a
``gunicorn.conf.py``. A Node function (``runtime: nodejs26``) gets ``run.sh``
starting the nodejs26 runtime, the same ``build.sh`` and a ``Dockerfile`` FROM
the nodejs26 runtime image. It reaches the function through a link ``f`` to the
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
from ..compat import TEMPLATES as PLATFORM_TEMPLATES
from .project import NODEJS26, RUNTIME, Project, ProjectError

DATA = Path(__file__).resolve().parent / "data"
DEFAULT_SCAFFOLDING = DATA / "scaffolding"
NODEJS26_SCAFFOLDING = DATA / "scaffolding-nodejs26"
TEMPLATES = DATA / "templates"
#: The built-in templates of each runtime: funcwsgi's own, then (Python) one per other platform,
#: in that platform's own layout (docs/platforms.md); a Node template lives in templates/nodejs26/.
TEMPLATES_OF = {
    RUNTIME: ("http", "cloudevent", *PLATFORM_TEMPLATES),
    # A Node template of a platform is a folder in templates/nodejs26/ (the Python side's names first).
    NODEJS26: (
        "http",
        *(name for name in PLATFORM_TEMPLATES if (TEMPLATES / NODEJS26 / name).is_dir()),
        *sorted(path.name for path in (TEMPLATES / NODEJS26).iterdir() if path.is_dir() and path.name not in ("http", *PLATFORM_TEMPLATES)),
    ),
}
#: What a Node platform template's func.yaml says: (module, function) of its handler, and the platform
#: (HANDLER_PLATFORM), since `funcwsgi run` sets HANDLER_MODULE_NAME and HANDLER_FUNCTION_NAME, which win
#: over what the platform's own files say (docs/platforms.md#nodejs-functions-nodejs26).
NODE_PLATFORM_HANDLERS = {
    "aws-lambda": ("app", "lambdaHandler", "aws-lambda"),
    "fission": ("handler", "main", "fission"),
}
BUILTIN_TEMPLATES = TEMPLATES_OF[RUNTIME]
EXECUTABLES = frozenset({"run.sh", "build.sh"})
LINK = "f"
RUNTIME_IMAGE = f"funcwsgi-runtime:{__version__}"
NODEJS26_IMAGE = f"funcwsgi-nodejs26:{__version__}"
#: The runtime image with debugpy (the Dockerfile built with EXTRAS=debug), for 'run --container --debug'.
DEBUG_RUNTIME_IMAGE = f"{RUNTIME_IMAGE}-debug"
#: The nodejs26 runtime's start script: next to the funcwsgi package in this repository, or where FUNCWSGI_NODEJS26_SERVE says.
NODEJS26_SERVE_ENV = "FUNCWSGI_NODEJS26_SERVE"


def runtime_image(project: Project) -> str:
    return NODEJS26_IMAGE if project.is_node else RUNTIME_IMAGE


def nodejs26_serve() -> Path:
    """The nodejs26 runtime's ``bin/serve``, or an error saying how to get it."""
    configured = os.environ.get(NODEJS26_SERVE_ENV)
    path = Path(configured) if configured else Path(__file__).resolve().parents[2] / "nodejs26" / "bin" / "serve"
    if not os.access(path, os.X_OK):
        raise ProjectError(
            f"the nodejs26 runtime is not installed at {path}: run 'make setup' in the funcwsgi repository, "
            f"or set {NODEJS26_SERVE_ENV} to the runtime's bin/serve"
        )
    return path


def template_dir(template: str, runtime: str = RUNTIME) -> Path:
    """The folder of a built-in template of ``runtime`` (``http``, ``cloudevent``) or a template folder path."""
    builtin = TEMPLATES_OF[runtime]
    if template in builtin:
        return TEMPLATES / template if runtime == RUNTIME else TEMPLATES / runtime / template
    if runtime != RUNTIME and template in BUILTIN_TEMPLATES:
        raise ProjectError(f"template {template!r} has no {runtime} version; {runtime} templates: {', '.join(builtin)}")
    folder = Path(template).expanduser()
    if not folder.is_dir():
        raise ProjectError(
            f"template {template!r} is neither a built-in template ({', '.join(BUILTIN_TEMPLATES)}) nor a folder"
        )
    return folder.resolve()


def scaffolding_files(project: Project) -> dict[str, Path]:
    """File name -> source, the template's own scaffolding winning over the default."""
    if project.is_node:
        files = {"build.sh": DEFAULT_SCAFFOLDING / "build.sh"}
        files.update({path.name: path for path in sorted(NODEJS26_SCAFFOLDING.iterdir()) if path.is_file()})
    else:
        files = {path.name: path for path in sorted(DEFAULT_SCAFFOLDING.iterdir()) if path.is_file()}
    try:
        own = template_dir(project.template, project.runtime) / "scaffolding"
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
    placeholders = {"{{funcwsgi_version}}": __version__}
    if project.is_node:
        placeholders["{{nodejs26_serve}}"] = str(nodejs26_serve())
    made = _first_missing(destination)
    try:
        return _write_files(project, destination, files, placeholders)
    except OSError as error:
        if made is not None:  # a folder this call made holds only what it wrote
            shutil.rmtree(made, ignore_errors=True)
        raise ProjectError(f"cannot write the scaffolding to {destination}: {error.filename or destination}: {error.strerror or error}") from None


def _first_missing(folder: Path) -> Path | None:
    """The outermost of ``folder`` and its parents that does not exist yet: what ``mkdir -p`` would make."""
    missing = None
    for candidate in (folder, *folder.parents):
        if os.path.lexists(candidate):
            break
        missing = candidate
    return missing


def _write_files(project: Project, destination: Path, files: dict[str, Path], placeholders: dict[str, str]) -> list[Path]:
    destination.mkdir(parents=True, exist_ok=True)
    written = []
    for name, source in files.items():
        target = destination / name
        text = source.read_text(encoding="utf-8")
        for placeholder, value in placeholders.items():
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
