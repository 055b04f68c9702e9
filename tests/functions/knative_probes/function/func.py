"""A func-python function whose alive() and ready() give each answer func-python accepts; /say?alive=...&ready=... picks them."""

from urllib.parse import parse_qs

SAYS = {
    "true": True,
    "false": False,
    "none": None,
    "truthy": "yes",
    "pair-true": (True, "Alive and well"),
    "pair-false": (False, "Database unreachable"),
    "pair-number": (False, 42),
}


def new():
    return Function()


class Function:
    def __init__(self):
        self.says = {"alive": "true", "ready": "true"}

    async def handle(self, scope, receive, send):
        if scope["path"] == "/fail":
            raise ValueError("token=abc123 leaked")
        for name, values in parse_qs(scope["query_string"].decode()).items():
            self.says[name] = values[0]
        await send({"type": "http.response.start", "status": 200, "headers": [[b"content-type", b"text/plain"]]})
        await send({"type": "http.response.body", "body": b"said"})

    def _say(self, name):
        kind = self.says[name]
        if kind == "raises":
            raise RuntimeError("password=hunter2")
        return SAYS[kind]

    def alive(self):
        return self._say("alive")

    def ready(self):
        return self._say("ready")
