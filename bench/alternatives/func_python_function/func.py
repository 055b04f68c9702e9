"""The I/O-bound function for Knative's func-python: an ASGI ``handle`` that waits 50 ms."""

import asyncio

BODY = b"Hello, world!"


async def handle(scope, receive, send):
    await asyncio.sleep(0.05)
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain; charset=utf-8")]})
    await send({"type": "http.response.body", "body": BODY})
