"""``funcwsgi create``: a new function project, with no platform code in it."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..project import FUNC_YAML, NAME_PATTERN, ProjectError, render_func_yaml, suggest_name
from ..scaffolding import BUILTIN_TEMPLATES, template_dir

NAME = "create"
HELP = "Create a function project: handler.py, requirements.txt, func.yaml, .gitignore and tests."
EPILOG = """examples:
  funcwsgi create hello                        # ./hello with an HTTP function
  funcwsgi create events --template cloudevent # a function that answers CloudEvents
  funcwsgi create . --name my-func             # in the current folder
  funcwsgi create fn --template ./my-template  # from a template folder of your own

The project holds only the function; the code that serves it (the scaffolding)
is written by run, build and scaffold. Existing files are never overwritten.
Test it with 'python -m pytest' in the project, run it with 'funcwsgi run'.
"""

#: Files a template names differently so packaging keeps them: name in template -> name written.
RENAMED = {"gitignore": ".gitignore"}
SKIPPED = {"scaffolding", "__pycache__", FUNC_YAML}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("directory", nargs="?", default=".", metavar="DIR", help="folder to create the project in (default: the current folder)")
    parser.add_argument(
        "--template", "-t", default="http", metavar="TEMPLATE",
        help=f"{' or '.join(BUILTIN_TEMPLATES)} (default http), or the path of a template folder",
    )
    parser.add_argument("--name", help="the function's name (default: made from the folder's name)")


def run(args: argparse.Namespace) -> int:
    destination = Path(args.directory).resolve()
    name = args.name or suggest_name(destination.name)
    if not name:
        raise ProjectError(f"cannot make a function name from the folder name {destination.name!r}; pass --name, e.g. --name hello")
    if not NAME_PATTERN.match(name):
        raise ProjectError(f"--name {name!r} is invalid: expected lower-case letters, digits and '-', at most 63 characters, such as 'hello-world'")
    source = template_dir(args.template)
    template = args.template if args.template in BUILTIN_TEMPLATES else str(source)
    files = template_files(source)
    files[FUNC_YAML] = render_func_yaml(name, template).encode()
    existing = sorted(relative for relative in files if (destination / relative).exists())
    if existing:
        raise ProjectError(
            f"{destination} already has {', '.join(existing)}; create the function in an empty folder or remove them"
        )
    for relative, content in files.items():
        target = destination / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
    shown = args.directory if args.directory != "." else "the current folder"
    print(f"Created function {name!r} ({args.template}) in {shown}:")
    for relative in sorted(files):
        print(f"  {relative}")
    where = "" if args.directory == "." else f"cd {args.directory} && "
    print(f"Next: {where}funcwsgi run    (tests: python -m pytest)")
    return 0


def template_files(source: Path) -> dict[str, bytes]:
    """Relative path -> content of every file a template writes into a project."""
    files: dict[str, bytes] = {}
    for path in sorted(source.rglob("*")):
        relative = path.relative_to(source)
        if not path.is_file() or relative.parts[0] in SKIPPED or "__pycache__" in relative.parts or path.suffix == ".pyc":
            continue
        parts = [RENAMED.get(part, part) for part in relative.parts]
        files["/".join(parts)] = path.read_bytes()
    if "handler.py" not in files:
        raise ProjectError(f"template {source} has no handler.py; a template folder holds at least handler.py")
    return files
