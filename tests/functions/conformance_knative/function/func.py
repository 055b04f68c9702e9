"""The conformance fixture's core paths as a Knative func-python instance."""

import asyncio
import json
from urllib.parse import parse_qs

SECRET = "conformance-secret-7f3a"


def new():
    return Fixture()


class Fixture:
    async def handle(self, scope, receive, send):
        path = scope["path"]
        body = (await receive()).get("body", b"")
        headers = dict(scope["headers"])
        query = parse_qs(scope["query_string"].decode(), keep_blank_values=True)
        status, content_type, extra, payload = 200, b"text/plain", [], f"fixture {scope['method']} {path}".encode()
        if path == "/hello":
            payload = b"hello"
        elif path == "/json":
            content_type, payload = b"application/json", json.dumps({"a": 1, "list": [1, "two"], "text": "ü"}).encode()
        elif path.startswith("/status/"):
            status = int(path.rsplit("/", 1)[1])
            payload = f"status {status}".encode()
        elif path == "/headers":
            extra, payload = [(b"x-conformance", b"yes")], b""
        elif path == "/echo":
            content_type, payload = headers.get(b"content-type", b"application/octet-stream"), body
        elif path == "/request":
            content_type, payload = b"application/json", json.dumps({"method": scope["method"], "path": path, "query": query}).encode()
        elif path == "/raise":
            raise RuntimeError(SECRET)
        elif path == "/sleep":
            await asyncio.sleep(float(query.get("seconds", ["1"])[0]))
            payload = b"slept"
        elif path == "/size":
            payload = str(len(body)).encode()
        await send({"type": "http.response.start", "status": status, "headers": [(b"content-type", content_type), *extra]})
        await send({"type": "http.response.body", "body": payload})
