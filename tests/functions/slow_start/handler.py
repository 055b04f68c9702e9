"""A function whose start() takes START_SECONDS; its hooks append "<hook> <pid>" to the file LIFECYCLE_LOG names."""

import os
import time


def _record(event):
    path = os.environ.get("LIFECYCLE_LOG")
    if path:
        with open(path, "a") as log:
            log.write(f"{event} {os.getpid()}\n")


def start():
    _record("start")
    time.sleep(float(os.environ.get("START_SECONDS", "2")))
    _record("started")


def stop():
    _record("stop")


def main(req, res):
    return "hello"
