"""``python -m tests.conformance [--runtime NAME | --runtime-command CMD --runtime-language LANG] [pytest options]``: run the kit on its own."""

import sys
from pathlib import Path

import pytest

if __name__ == "__main__":
    kit = Path(__file__).resolve().parent
    sys.exit(pytest.main([str(kit), "-p", "no:cacheprovider", *sys.argv[1:]]))
