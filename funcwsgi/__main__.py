"""``python -m funcwsgi``: the CLI; with no arguments it serves, like ``funcwsgi serve``."""

import sys

from .cli import main

sys.exit(main(sys.argv[1:] or ["serve"]))
