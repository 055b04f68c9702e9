"""The I/O-bound function, sync: it waits 50 ms on its thread, then answers."""

import time


def main(req, res):
    time.sleep(0.05)
    return "Hello, world!"
