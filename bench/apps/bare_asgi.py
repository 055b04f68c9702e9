"""The reference point of the event-loop path: a hello world written straight against ASGI, no framework."""

BODY = b"Hello, world!"
START = {
    "type": "http.response.start",
    "status": 200,
    "headers": [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(BODY)).encode())],
}
RESPONSE = {"type": "http.response.body", "body": BODY}


async def app(scope, receive, send):
    if scope["type"] != "http":  # lifespan: nothing to set up
        return
    await send(START)
    await send(RESPONSE)
