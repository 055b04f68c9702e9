"""The conformance fixture's core paths as an AWS Lambda handler (payload format 2.0)."""

import base64
import time

SECRET = "conformance-secret-7f3a"


def lambda_handler(event, context):
    path = event["rawPath"]
    body = base64.b64decode(event.get("body", "")) if event.get("isBase64Encoded") else event.get("body", "").encode()
    if path == "/hello":
        return {"statusCode": 200, "headers": {"Content-Type": "text/plain"}, "body": "hello"}
    if path == "/json":
        return {"a": 1, "list": [1, "two"], "text": "ü"}
    if path.startswith("/status/"):
        code = int(path.rsplit("/", 1)[1])
        return {"statusCode": code, "headers": {"Content-Type": "text/plain"}, "body": f"status {code}"}
    if path == "/headers":
        return {"statusCode": 200, "headers": {"X-Conformance": "yes"}, "body": ""}
    if path == "/echo":
        return {"statusCode": 200, "headers": {"Content-Type": event["headers"].get("content-type", "application/octet-stream")},
                "body": base64.b64encode(body).decode(), "isBase64Encoded": True}
    if path == "/request":
        query = {}
        for pair in filter(None, event["rawQueryString"].split("&")):
            key, _, value = pair.partition("=")
            query.setdefault(key, []).append(value)
        return {"method": event["requestContext"]["http"]["method"], "path": path, "query": query}
    if path == "/raise":
        raise RuntimeError(SECRET)
    if path == "/sleep":
        time.sleep(float((event.get("queryStringParameters") or {}).get("seconds", "1")))
        return {"statusCode": 200, "headers": {"Content-Type": "text/plain"}, "body": "slept"}
    if path == "/size":
        return {"statusCode": 200, "headers": {"Content-Type": "text/plain"}, "body": str(len(body))}
    return {"statusCode": 200, "headers": {"Content-Type": "text/plain"}, "body": f"fixture {event['requestContext']['http']['method']} {path}"}
