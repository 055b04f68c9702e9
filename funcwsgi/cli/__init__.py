"""The ``funcwsgi`` command line.

Each subcommand is a module in :mod:`funcwsgi.cli.commands` with ``NAME``,
``HELP``, ``EPILOG``, ``add_arguments(parser)`` and ``run(args) -> int``;
``COMMANDS`` lists them in the order ``--help`` shows them. Only the
command being run is imported (``funcwsgi serve`` starts without loading
the build and scaffolding machinery); ``--help`` imports them all.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence
from types import SimpleNamespace
from typing import TYPE_CHECKING

from .. import __version__
from ..errors import EXIT_STARTUP_ERROR, StartupError, print_startup_error

if TYPE_CHECKING:
    import argparse

COMMANDS: list[str] = [
    "funcwsgi.cli.commands.create",
    "funcwsgi.cli.commands.run",
    "funcwsgi.cli.commands.invoke",
    "funcwsgi.cli.commands.build",
    "funcwsgi.cli.commands.push",
    "funcwsgi.cli.commands.deploy",
    "funcwsgi.cli.commands.scaffold",
    "funcwsgi.cli.commands.serve",
    "funcwsgi.cli.commands.settings",
]

DESCRIPTION = "Serve, scaffold, build, deploy and call serverless Python functions."


def command_module(name: str) -> str | None:
    """The module of the command called ``name`` (each module is named after its command)."""
    return next((module for module in COMMANDS if module.rsplit(".", 1)[-1] == name), None)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or of command module ``only``."""
    import argparse  # not for `serve` alone: 8 million instructions of a start where the server is not gunicorn

    parser = argparse.ArgumentParser(prog="funcwsgi", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"funcwsgi {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module_name in COMMANDS if only is None else [only]:
        command = importlib.import_module(module_name)
        sub = subparsers.add_parser(
            command.NAME,
            help=command.HELP,
            description=command.HELP,
            epilog=command.EPILOG,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        command.add_arguments(sub)
        sub.set_defaults(run=command.run, accepts_extra=getattr(command, "ACCEPTS_EXTRA", False), command_parser=sub)
    return parser


#: What a function's container runs: ``serve`` takes no arguments, so a command of that alone is run
#: without building a parser (argparse's, about 4 million instructions of every cold start; issue 44).
SERVE_ALONE = ["serve"]


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv == SERVE_ALONE:
        return run_command(SimpleNamespace(command="serve", extra=[], run=importlib.import_module("funcwsgi.cli.commands.serve").run))
    parser = build_parser(command_module(argv[0]) if argv else None)
    # Arguments after `--` are passed through (to the image build or the service command).
    extra: list[str] = []
    if "--" in argv:
        split = argv.index("--")
        argv, extra = argv[:split], argv[split + 1 :]
    args, unknown = parser.parse_known_args(argv)
    # A command's own parser says what is wrong, so the usage shown is that command's, not the list of commands.
    command_parser = getattr(args, "command_parser", parser)
    if unknown:
        command_parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    if getattr(args, "run", None) is None:
        parser.print_help()
        return 0
    if extra and not args.accepts_extra:
        command_parser.error(f"'funcwsgi {args.command}' takes no arguments after --")
    del args.command_parser
    args.extra = extra
    return run_command(args)


def run_command(args: argparse.Namespace | SimpleNamespace) -> int:
    """Run the parsed command: a start-up error is one line and its exit status, Ctrl-C 130."""
    try:
        return int(args.run(args) or 0)
    except StartupError as error:
        print_startup_error(error)
        return EXIT_STARTUP_ERROR
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
