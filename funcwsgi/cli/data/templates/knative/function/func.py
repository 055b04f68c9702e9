"""A Knative func-python function: new() makes the instance, whose async handle is an ASGI app.

Nothing here imports funcwsgi: the same folder builds with `func build` (runtime: python).
"""

import json
from urllib.parse import parse_qs


def new():
    return Function()


class Function:
    async def handle(self, scope, receive, send):
        message = await receive()
        body = json.loads(message.get("body") or b"{}")
        query = parse_qs(scope["query_string"].decode())
        name = (query.get("name") or [None])[0] or body.get("name") or "world"
        await send({"type": "http.response.start", "status": 200, "headers": [[b"content-type", b"application/json"]]})
        await send({"type": "http.response.body", "body": json.dumps({"message": f"Hello, {name}!"}).encode()})

    def start(self, cfg):
        """Called once per worker with a copy of the environment."""

    def stop(self):
        """Called at shutdown."""

    def alive(self):
        return True, "Alive"

    def ready(self):
        return True, "Ready"
