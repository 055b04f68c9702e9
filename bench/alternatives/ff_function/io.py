"""The I/O-bound function for Google's Functions Framework (``--target wait``): 50 ms of waiting."""

import os
import time

WAIT = float(os.environ.get("BENCH_WAIT_SECONDS", "0.05"))  # bench/overload.py waits longer


def wait(request):
    time.sleep(WAIT)
    return "Hello, world!"
