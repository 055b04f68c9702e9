"""A func-python instance that exercises what the event loop gives an ASGI function.

Written as `func create -l python` lays a function out, importing nothing of
funcwsgi but ``sdk.cancelled()`` in ``/watch``: ``/stream`` sends its body in pieces, ``/forever`` waits until it is
cancelled (and remembers that it was), ``/cancelled`` reports those calls and
the tasks left on the loop, ``/fail`` and ``/fail-midway`` raise before and
after the response started, ``/sleep`` waits, ``/size`` counts the body,
``/traced`` makes a span of its own, ``/log`` logs a line, ``/watch``
streams until the client leaves.
"""

import asyncio
import json
import logging
import os
import threading
import time
from urllib.parse import parse_qs

import sdk

SECRET = "knative secret token 7431"

log = logging.getLogger("knative-loop")


def new():
    return Function()


def _lifecycle(event):
    path = os.environ.get("LIFECYCLE_LOG")
    if path:
        with open(path, "a") as out:
            out.write(f"{event} {os.getpid()}\n")


class Function:
    def __init__(self):
        self.greeting = None
        self.cancellations = []
        self.watchers = []  # how each /watch call ended
        self.healthy = True

    def start(self, cfg):
        self.greeting = cfg.get("GREETING")
        _lifecycle("start")

    def stop(self):
        _lifecycle("stop")

    def alive(self):
        return self.healthy, "Alive" if self.healthy else "poisoned"

    def ready(self):
        return (True, "Ready") if self.greeting else (False, "no greeting")

    async def watch(self, receive, send, request_id):
        """Streams until the client leaves, which receive() says after the body (an SSE stream's shape)."""
        await receive()  # the (empty) body
        left = asyncio.ensure_future(receive())
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]})
        try:
            while not left.done():
                await send({"type": "http.response.body", "body": b"data: tick\n\n", "more_body": True})
                await asyncio.wait([left], timeout=0.05)
            # Its own http.disconnect cancels the call: sdk.cancelled() says so from then on.
            self.watchers.append({"request_id": request_id, "ended": left.result()["type"], "cancelled": sdk.cancelled()})
        except asyncio.CancelledError:
            self.watchers.append({"request_id": request_id, "ended": "cancelled"})
            raise
        finally:
            left.cancel()

    async def handle(self, scope, receive, send):
        path = scope["path"]
        query = {key: values[0] for key, values in parse_qs(scope["query_string"].decode()).items()}
        headers = {key.decode(): value.decode() for key, value in scope["headers"]}
        if path == "/stream":
            await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
            for n in range(int(query.get("n", "3"))):
                await send({"type": "http.response.body", "body": f"piece {n}\n".encode(), "more_body": True})
                await asyncio.sleep(float(query.get("gap", "0.3")))
            await send({"type": "http.response.body", "body": b"end\n"})
            return
        if path == "/watch":
            await self.watch(receive, send, headers.get("x-request-id"))
            return
        if path == "/forever":
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:
                self.cancellations.append({"request_id": headers.get("x-request-id"), "at": time.monotonic()})
                raise
        if path == "/fail":
            raise RuntimeError(SECRET)
        if path == "/fail-midway":
            await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
            await send({"type": "http.response.body", "body": b"first part\n", "more_body": True})
            await asyncio.sleep(0.2)
            raise RuntimeError(SECRET)
        if path == "/poison":
            self.healthy = query.get("healthy") == "1"
        if path == "/sleep":
            await asyncio.sleep(float(query.get("s", "1")))
        if path == "/traced":
            from opentelemetry import trace

            with trace.get_tracer("knative-loop").start_as_current_span("knative-work"):
                await asyncio.sleep(0)
        if path == "/log":
            log.warning("logged by the knative function")
        message = await receive()
        answer = {
            "path": path,
            "greeting": self.greeting,
            "size": len(message.get("body", b"")),
            "cancellations": self.cancellations,
            "watchers": self.watchers,
            "tasks": len(asyncio.all_tasks()),
            "thread": threading.current_thread().name,
            "now": time.monotonic(),
        }
        body = json.dumps(answer).encode()
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": body})
