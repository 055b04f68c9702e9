"""A python3-http handler returning each shape the template's format_response accepts; the path picks one."""

from flask import Response


def handle(event, context):
    path = event.path
    if path == "/headers-dict":
        return {"statusCode": 200, "body": "dict headers", "headers": {"X-One": "1", "X-Two": "2"}}
    if path == "/headers-list":
        return {"statusCode": 200, "body": "list headers", "headers": [("X-Pair", "first"), ("X-Pair", "second"), ("X-Other", "o")]}
    if path == "/no-body":
        return {"statusCode": 202}
    if path == "/no-status":
        return {"body": "no status"}
    if path == "/number-body":
        return {"body": 42}
    if path == "/dict-body":
        return {"statusCode": 201, "body": {"b": 1, "a": "é", "list": [True, None]}}
    if path == "/dict-body-own-type":
        return {"body": {"a": 1}, "headers": {"Content-Type": "application/vnd.api+json"}}
    if path == "/status-text":
        return {"statusCode": "418 I'm a teapot", "body": "tea"}
    if path == "/none":
        return None
    if path == "/string":
        return "a plain string"
    if path == "/bytes":
        return b"raw bytes"
    if path == "/list":
        return [1, "two"]
    if path == "/tuple":
        return "made", 201, {"X-Tuple": "yes"}
    if path == "/response":
        return Response("a flask response", status=203, mimetype="text/csv")
    return {"statusCode": 404, "body": "unknown"}
