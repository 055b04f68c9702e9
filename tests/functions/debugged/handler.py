"""A function a debugger attaches to (tests/container/test_debug.py): a breakpoint goes on the marked line."""

import os


def main(req, res):
    if req.path == "/paused":
        where = "past the breakpoint"  # breakpoint
        return where
    return str(os.getpid())
