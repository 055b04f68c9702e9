"""The exits function as ``async def``: /sys-exit/N calls sys.exit(N) on the event loop."""

import os
import sys


async def main(req, res):
    how, _, status = req.path.strip("/").partition("/")
    if how == "sys-exit":
        sys.exit(int(status))
    return f"worker {os.getpid()}"
