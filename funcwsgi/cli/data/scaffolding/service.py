"""Scaffolding written by funcwsgi: the function as a service.

The function is a dependency: it is imported from ./f (a link to the
function's folder) by the funcwsgi runtime library, which serves it with the
HTTP server SERVER_ADAPTER names. Nothing here is specific to one function.
This file is regenerated for every run and build unless the project is
scaffolded ('funcwsgi scaffold'), in which case it is yours to change.
"""

import os
import sys
from pathlib import Path

# Without a HANDLER_FOLDER of its own (a container sets one), the function is
# where the link ./f leads: its real path, so a reloader watches the real files.
os.environ.setdefault("HANDLER_FOLDER", str((Path(__file__).parent / "f").resolve()))


def __getattr__(name: str):
    # `gunicorn -c gunicorn.conf.py service:app`: the runtime's app, built on first use.
    if name == "app":
        import funcwsgi

        return funcwsgi.app
    raise AttributeError(name)


def main(arguments: list[str]) -> int:
    """Serve the function; each argument is a setting, NAME=value (func.yaml run.args)."""
    from funcwsgi.cli import main as funcwsgi
    from funcwsgi.config import known_env_names

    for argument in arguments:
        name, sep, value = argument.partition("=")
        if not sep or name not in known_env_names():
            print(f"service.py: argument {argument!r} is invalid: expected NAME=value of a funcwsgi setting, e.g. SERVER_WORKERS=2", file=sys.stderr)
            return 2
        os.environ[name] = value
    return funcwsgi(["serve"])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
