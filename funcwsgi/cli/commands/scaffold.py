"""``funcwsgi scaffold``: write the scaffolding into the project, to own it."""

from __future__ import annotations

import argparse
from pathlib import Path

from .. import scaffolding
from ..project import DIST, ProjectError, load_project, set_scaffolded

NAME = "scaffold"
HELP = "Write the scaffolding (service.py, run.sh, build.sh, Dockerfile, gunicorn.conf.py; Node: run.sh, build.sh, Dockerfile) into ./dist and own it."
EPILOG = """examples:
  funcwsgi scaffold                    # ./dist, and scaffolded: true in func.yaml
  funcwsgi scaffold --force            # refresh ./dist with this CLI's scaffolding
  funcwsgi scaffold --output /tmp/svc  # a full service elsewhere, e.g. for a CI pipeline

Once ./dist is written and func.yaml says scaffolded: true, 'funcwsgi run' and
'funcwsgi build' use ./dist/run.sh and ./dist/build.sh and generate nothing:
changes to ./dist are yours, and so are its updates. An --output other than
./dist leaves func.yaml alone.
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("directory", nargs="?", default=".", metavar="DIR", help="the function's folder (default: the current folder)")
    parser.add_argument("--output", "-o", default=None, metavar="DIR", help=f"where to write it (default: ./{DIST} in the project)")
    parser.add_argument("--force", action="store_true", help="replace scaffolding files that already exist there")


def run(args: argparse.Namespace) -> int:
    project = load_project(args.directory)
    output = Path(args.output).resolve() if args.output else project.dist
    if args.output and output.exists() and not output.is_dir():
        raise ProjectError(f"--output {args.output!r} is invalid: {output} is a file: expected a folder to write the scaffolding into")
    written = scaffolding.write(project, output, overwrite=args.force)
    print(f"Wrote the scaffolding of {project.name!r} to {output}:")
    for path in written:
        print(f"  {path.name}{' -> ' + str(path.readlink()) if path.is_symlink() else ''}")
    if output == project.dist:
        set_scaffolded(project.root, True)
        print("func.yaml: scaffolded: true; 'funcwsgi run' and 'funcwsgi build' now use these scripts.")
    return 0
