"""The I/O-bound function, sync: it waits 50 ms on its thread, then answers."""

import os
import time

WAIT = float(os.environ.get("BENCH_WAIT_SECONDS", "0.05"))  # bench/overload.py waits longer


def main(req, res):
    time.sleep(WAIT)
    return "Hello, world!"
