"""The I/O-bound function for Google's Functions Framework (``--target wait``): 50 ms of waiting."""

import time


def wait(request):
    time.sleep(0.05)
    return "Hello, world!"
