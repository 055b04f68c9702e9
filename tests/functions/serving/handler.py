"""The function the server tests serve: the path names what to do.

Lifecycle hooks append "<hook> <pid>" to the file LIFECYCLE_LOG names;
ready()/alive() fail while HEALTH_DIR holds a file named not-ready/not-alive.
"""

import os
import threading
import time

import sdk

_thread_state = threading.local()


def _record(event):
    path = os.environ.get("LIFECYCLE_LOG")
    if path:
        with open(path, "a") as log:
            log.write(f"{event} {os.getpid()}\n")


def _flag(name):
    folder = os.environ.get("HEALTH_DIR")
    return bool(folder) and os.path.exists(os.path.join(folder, name))


def start():
    _record("start")
    if _flag("fail-start"):
        raise RuntimeError("cannot reach the database")


def stop():
    _record("stop")


def ready():
    return "warming up the cache" if _flag("not-ready") else True


def alive():
    return not _flag("not-alive")


def main(req, res):
    action = req.path.strip("/")
    if action == "sleep":
        _record("sleeping")
        time.sleep(float(req.args.get("s", "1")))
        return "slept"
    if action == "forever":  # blocked in C: only another thread can answer
        time.sleep(3600)
    if action == "spin":  # pure Python: stopped at its next instruction
        while True:
            pass
    if action == "fail":
        raise RuntimeError("secret database password is hunter2")
    if action == "size":
        return {"size": len(req.get_data())}
    if action == "crash":
        os._exit(1)
    if action == "pid":
        return {"pid": os.getpid()}
    if action == "context":
        _thread_state.calls = getattr(_thread_state, "calls", 0) + 1
        return {"path": sdk.get_request().path, "thread_calls": _thread_state.calls}
    return "hello"
