"""The conformance fixture's core paths as an OpenFaaS python3-http handler."""

import time

from flask import Response

SECRET = "conformance-secret-7f3a"


def handle(event, context):
    path = event.path
    if path == "/hello":
        return {"statusCode": 200, "body": "hello", "headers": {"Content-Type": "text/plain"}}
    if path == "/json":
        return {"statusCode": 200, "body": {"a": 1, "list": [1, "two"], "text": "ü"}}
    if path.startswith("/status/"):
        code = int(path.rsplit("/", 1)[1])
        return {"statusCode": code, "body": f"status {code}", "headers": {"Content-Type": "text/plain"}}
    if path == "/headers":
        return {"statusCode": 200, "body": "", "headers": {"X-Conformance": "yes"}}
    if path == "/echo":
        # Bytes under their own type: a Flask response, which the template passes to Flask as it is.
        return Response(event.body, content_type=event.headers.get("Content-Type", "application/octet-stream"))
    if path == "/request":
        return {"statusCode": 200, "body": {"method": event.method, "path": path, "query": event.query.to_dict(flat=False)}}
    if path == "/raise":
        raise RuntimeError(SECRET)
    if path == "/sleep":
        time.sleep(float(event.query.get("seconds", "1")))
        return {"statusCode": 200, "body": "slept", "headers": {"Content-Type": "text/plain"}}
    if path == "/size":
        return {"statusCode": 200, "body": str(len(event.body)), "headers": {"Content-Type": "text/plain"}}
    return {"statusCode": 200, "body": f"fixture {event.method} {path}", "headers": {"Content-Type": "text/plain"}}
