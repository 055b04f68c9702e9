"""``funcwsgi create``: a new function project, with no platform code in it."""

from __future__ import annotations

import argparse
import contextlib
import errno
import os
from pathlib import Path

from ..project import FUNC_YAML, MODULE_FILES, NAME_EXPECTED, NODEJS26, RUNTIME, RUNTIMES, ProjectError, check_name, render_func_yaml, suggest_name
from ..scaffolding import BUILTIN_TEMPLATES, DATA, NODE_PLATFORM_HANDLERS, TEMPLATES_OF, template_dir

NAME = "create"
HELP = "Create a function project: handler.py (or handler.js), its dependencies, func.yaml, .gitignore and tests."
EPILOG = """examples:
  funcwsgi create hello                        # ./hello with an HTTP function
  funcwsgi create events --template cloudevent # a function that answers CloudEvents
  funcwsgi create api --template aws-lambda    # an AWS Lambda handler in sam init's layout
                                               # (also: azure, openfaas, fission, knative)
  funcwsgi create hello-js --runtime nodejs26  # a Node function: handler.js, package.json
  funcwsgi create . --name my-func             # in the current folder
  funcwsgi create fn --template ./my-template  # from a template folder of your own

The project holds only the function; the code that serves it (the scaffolding)
is written by run, build and scaffold. Existing files are never overwritten.
Test it with 'python -m pytest' (Node: 'node --test') in the project, run it
with 'funcwsgi run'.
"""
#: Where a template's package.json takes the function's name.
NAME_PLACEHOLDER = b"{{name}}"

#: The templates that greet (one function behind each platform's front) share one test file,
#: data/shared/test_handler.py, written with the path the template serves the greeting on.
GREETING_TEST = DATA / "shared" / "test_handler.py"
GREETING_PATHS = {"http": "/", "aws-lambda": "/", "openfaas": "/", "fission": "/", "knative": "/", "azure": "/api/hello"}
PATH_PLACEHOLDER = b"{{path}}"

#: Files a template names differently so packaging keeps them: name in template -> name written.
RENAMED = {"gitignore": ".gitignore"}
SKIPPED = {"scaffolding", "__pycache__", "node_modules", FUNC_YAML}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("directory", nargs="?", default=".", metavar="DIR", help="folder to create the project in (default: the current folder)")
    parser.add_argument(
        "--template", "-t", default="http", metavar="TEMPLATE",
        help=f"{' or '.join(BUILTIN_TEMPLATES)} (default http), or the path of a template folder",
    )
    parser.add_argument("--name", help="the function's name (default: made from the folder's name)")
    parser.add_argument(
        "--runtime", "-r", default=RUNTIME, choices=RUNTIMES,
        help=f"{RUNTIME} (default: funcwsgi) or {NODEJS26} (the Node runtime; templates: {', '.join(TEMPLATES_OF[NODEJS26])})",
    )


def run(args: argparse.Namespace) -> int:
    destination = Path(args.directory).resolve()
    name = function_name(args.name, destination)
    source = template_dir(args.template, args.runtime)
    template = args.template if args.template in TEMPLATES_OF[args.runtime] else str(source)
    files = template_files(source, MODULE_FILES[args.runtime])
    if args.runtime == RUNTIME and args.template in GREETING_PATHS:
        files["tests/test_handler.py"] = GREETING_TEST.read_bytes().replace(PATH_PLACEHOLDER, GREETING_PATHS[args.template].encode())
    if "package.json" in files:
        files["package.json"] = files["package.json"].replace(NAME_PLACEHOLDER, name.encode())
    handler = NODE_PLATFORM_HANDLERS.get(args.template) if args.runtime == NODEJS26 else None
    if handler is None:
        files[FUNC_YAML] = render_func_yaml(name, template, args.runtime).encode()
    else:
        module, function, platform = handler
        files[FUNC_YAML] = render_func_yaml(name, template, args.runtime, module=module, function=function, envs={"HANDLER_PLATFORM": platform}).encode()
    if destination.exists() and not destination.is_dir():
        raise ProjectError(f"DIR {args.directory!r} is invalid: {destination} is a file: expected a folder to create the project in")
    existing = sorted(relative for relative in files if (destination / relative).exists())
    if existing:
        raise ProjectError(
            f"{destination} already has {', '.join(existing)}; create the function in an empty folder or remove them"
        )
    write_project(destination, files)
    shown = args.directory if args.directory != "." else "the current folder"
    print(f"Created function {name!r} ({args.template}) in {shown}:")
    for relative in sorted(files):
        print(f"  {relative}")
    where = "" if args.directory == "." else f"cd {args.directory} && "
    tests = "node --test" if args.runtime == NODEJS26 else "python -m pytest"
    print(f"Next: {where}funcwsgi run    (tests: {tests})")
    return 0


def write_project(destination: Path, files: dict[str, bytes]) -> None:
    """Write every file or none: on an OS error, what was written is removed and the error names the path."""
    created: list[Path] = []  # files and folders, in the order they were made
    try:
        for relative, content in files.items():
            target = destination / relative
            make_folder(target.parent, created)
            with open(target, "xb") as stream:  # "x": never replace a file that appeared since the check
                created.append(target)
                stream.write(content)
    except OSError as error:
        for path in reversed(created):
            with contextlib.suppress(OSError):
                if path.is_dir():
                    path.rmdir()
                else:
                    path.unlink()
        raise ProjectError(f"cannot create {error.filename or destination}: {error.strerror or error}") from None


def make_folder(folder: Path, created: list[Path]) -> None:
    """``mkdir -p folder``, adding each folder made to ``created`` (parents first)."""
    if folder.is_dir():
        return
    if folder.exists():  # mkdir would say "File exists", which reads as if all were well
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(folder))
    make_folder(folder.parent, created)
    folder.mkdir()
    created.append(folder)


def function_name(given: str | None, destination: Path) -> str:
    """``--name``, or the name made from the folder's; refused here, before anything is written, as func.yaml would refuse it."""
    if given is None:
        name = suggest_name(destination.name)
        if not name:
            raise ProjectError(
                f"cannot make a function name from the folder name {destination.name!r}: expected {NAME_EXPECTED}; pass --name, e.g. --name hello"
            )
        return name
    try:
        return check_name(given)
    except ValueError as expected:
        raise ProjectError(f"--name {given!r} is invalid: expected {expected}") from None


def template_files(source: Path, module_file: str = MODULE_FILES[RUNTIME]) -> dict[str, bytes]:
    """Relative path -> content of every file a template writes into a project."""
    files: dict[str, bytes] = {}
    for path in sorted(source.rglob("*")):
        relative = path.relative_to(source)
        if not path.is_file() or relative.parts[0] in SKIPPED or "__pycache__" in relative.parts or path.suffix == ".pyc":
            continue
        parts = [RENAMED.get(part, part) for part in relative.parts]
        files["/".join(parts)] = path.read_bytes()
    if module_file.endswith(".js"):
        # A platform's layout (an Azure app, a Functions Framework function) names its files in package.json.
        if module_file not in files and "package.json" not in files:
            raise ProjectError(f"template {source} has no {module_file} or package.json; a template folder holds at least one of them")
    elif not any(relative.endswith(".py") and not relative.startswith("tests/") for relative in files):
        raise ProjectError(f"template {source} has no Python file; a template folder holds at least handler.py (or a platform's function files)")
    return files
