"""The function the server tests serve: the path names what to do.

Lifecycle hooks append "<hook> <pid>" to the file LIFECYCLE_LOG names;
ready()/alive() fail while HEALTH_DIR holds a file named not-ready/not-alive.
"""

import os
import signal
import socket
import threading
import time

import sdk

_thread_state = threading.local()
_leaked = []  # what /leak keeps, as a function with a memory leak would


def _record(event):
    path = os.environ.get("LIFECYCLE_LOG")
    if path:
        with open(path, "a") as log:
            log.write(f"{event} {os.getpid()}\n")


class _Stream:
    """A streamed body: close() records "closed <tag> <pid>". No finalizer: only a real close() records it."""

    def __init__(self, tag):
        self.tag = tag
        self.chunks = iter([b"one,", b"two,", b"three"])

    def __iter__(self):
        return self

    def __next__(self):
        return next(self.chunks)

    def close(self):
        _record(f"closed {self.tag}")


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


def _fail(req):
    raise RuntimeError("secret database password is hunter2")


def _event_type(req):
    event = req.cloud_event
    return {"type": None if event is None else event.get_attributes()["type"]}


#: The paths this function and its async twin answer alike, waiting for nothing: action -> answer(req).
ANSWERED_ALIKE = {
    "fail": _fail,
    "stream": lambda req: _Stream(req.args.get("tag", "")),  # a streamed body that says when the server closed it
    "size": lambda req: {"size": len(req.get_data())},
    "event": _event_type,
    "json": lambda req: {"echo": req.get_json()},
    "pid": lambda req: {"pid": os.getpid()},
}


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
    if action in ANSWERED_ALIKE:
        return ANSWERED_ALIKE[action](req)
    if action == "crash":
        os._exit(1)
    if action == "kill":  # the function's process dies of a signal
        os.kill(os.getpid(), signal.SIGKILL)
    if action == "socket-read":  # blocked reading a socket whose peer never sends
        with socket.create_server(("127.0.0.1", 0)) as listener:
            with socket.create_connection(listener.getsockname()) as peer:
                peer.recv(1)
    if action == "leak":
        _leaked.append(b"x" * (int(req.args.get("kb", "1024")) * 1024))
        return {"pid": os.getpid(), "leaked_kb": sum(map(len, _leaked)) // 1024}
    if action == "publish":  # a function that answers even when its event cannot be sent
        try:
            sdk.emit_cloud_event("order.created", "/shop", {"id": 7})
        except sdk.PublishError:
            return "event not published", 503
        return "published"
    if action == "traced":
        with sdk.get_tracer().start_as_current_span("work"):
            return "traced"
    if action == "path" or action.startswith("path/"):
        return {"path": req.path, "args": req.args.to_dict()}
    if action == "bad-header":
        res.set_header("X-Injected", req.args.get("value", "a\r\nSet-Cookie: evil=1"))
        return "not sent"
    if action == "dated":
        res.set_header("Date", "Tue, 01 Jan 2030 00:00:00 GMT")
        return "dated"
    if action == "unsupported":
        return object()
    if action == "context":
        _thread_state.calls = getattr(_thread_state, "calls", 0) + 1
        return {"path": sdk.get_request().path, "thread": threading.get_ident(), "thread_calls": _thread_state.calls}
    return "hello"
