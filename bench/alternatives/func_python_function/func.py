"""The I/O-bound function for Knative's func-python: an ASGI ``handle`` that waits 50 ms."""

import asyncio
import os

BODY = b"Hello, world!"
WAIT = float(os.environ.get("BENCH_WAIT_SECONDS", "0.05"))  # bench/overload.py waits longer


async def handle(scope, receive, send):
    await asyncio.sleep(WAIT)
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain; charset=utf-8")]})
    await send({"type": "http.response.body", "body": BODY})
