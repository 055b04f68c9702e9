"""A function whose stop() never returns, whose start() may start a thread that never ends (KEEP_THREAD) or take
START_SECONDS; its hooks append "<hook> <pid>" to the file LIFECYCLE_LOG names."""

import os
import threading
import time


def _record(event):
    path = os.environ.get("LIFECYCLE_LOG")
    if path:
        with open(path, "a") as log:
            log.write(f"{event} {os.getpid()}\n")


def start():
    _record("start")
    if os.environ.get("KEEP_THREAD"):
        threading.Thread(target=time.sleep, args=(1000,), name="never-ends").start()  # not a daemon
    time.sleep(float(os.environ.get("START_SECONDS", "0")))
    _record("started")


def stop():
    _record("stop")
    if os.environ.get("STOP_HANGS", "1") == "1":
        time.sleep(1000)
    _record("stopped")


def main(req, res):
    return "hello"
