"""An ASGI app as the function, the shape Knative's func-python serves: ``handle(scope, receive, send)``."""

import asyncio


async def handle(scope, receive, send):
    message = await receive()
    await asyncio.sleep(0)
    body = message.get("body", b"")
    await send({
        "type": "http.response.start",
        "status": 201,
        "headers": [(b"content-type", b"text/plain"), (b"x-seen-path", scope["path"].encode())],
    })
    await send({"type": "http.response.body", "body": b"got " + body, "more_body": True})
    await send({"type": "http.response.body", "body": b" via " + scope["method"].encode()})
