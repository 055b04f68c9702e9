"""A python3-http handler, as `faas-cli new --lang python3-http` lays it out; a sibling module imported relatively."""

from .greetings import PREFIX


def handle(event, context):
    if event.path == "/fail":
        raise ValueError("secret token abc123")
    if event.path == "/json":
        return {"statusCode": 201, "body": {"method": event.method, "query": event.query.getlist("q"), "agent": event.headers.get("X-Agent")}}
    if event.path == "/bytes":
        return {"statusCode": 200, "body": b"\x00\x01", "headers": {"Content-type": "application/octet-stream"}}
    if event.path == "/text":
        return "a plain string"
    return {"statusCode": 200, "body": PREFIX + event.body.decode(), "headers": {"X-Host": context.hostname}}
