"""Ends its worker process from inside a call: /os-exit/N calls os._exit(N), /sys-exit/N sys.exit(N)."""

import os
import sys


def main(req, res):
    how, _, status = req.path.strip("/").partition("/")
    if how == "os-exit":
        os._exit(int(status))
    if how == "sys-exit":
        sys.exit(int(status))
    return f"worker {os.getpid()}"
