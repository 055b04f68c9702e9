"""A func-python function in the layout `func create -l python` writes."""

import json
import logging


def new():
    return Function()


class Function:
    def __init__(self):
        self.started_with = None
        self.calls = 0

    async def handle(self, scope, receive, send):
        if scope["path"] == "/fail":
            raise RuntimeError("internal detail 42")
        if scope["path"] == "/sick":
            self.healthy = False
        message = await receive()
        self.calls += 1
        body = json.dumps({
            "method": scope["method"], "path": scope["path"], "query": scope["query_string"].decode(),
            "headers": {k.decode(): v.decode() for k, v in scope["headers"]},
            "body": message["body"].decode(), "started": self.started_with, "calls": self.calls,
        }).encode()
        await send({"type": "http.response.start", "status": 200, "headers": [[b"content-type", b"application/json"]]})
        await send({"type": "http.response.body", "body": body})

    def start(self, cfg):
        logging.info("Function starting")
        self.started_with = cfg.get("GREETING")
        self.healthy = True

    def stop(self):
        logging.info("Function stopping")

    def alive(self):
        return self.healthy, "Alive" if self.healthy else "sick"

    def ready(self):
        return True, "Ready"
