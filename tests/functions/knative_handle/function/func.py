"""A module-level ASGI handle that streams its body."""

import asyncio


async def handle(scope, receive, send):
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
    for n in range(3):
        await send({"type": "http.response.body", "body": f"chunk {n}\n".encode(), "more_body": True})
        await asyncio.sleep(0.2)
    await send({"type": "http.response.body", "body": b"done\n", "more_body": False})
