"""An AWS Lambda handler in the style of the Lambda docs' API Gateway examples."""

import base64
import decimal
import json

#: Results a handler may return that the runtime cannot marshal or API Gateway refuses (tests/compat/test_aws_lambda.py).
INVALID = {
    "bytes-body": {"statusCode": 200, "body": b"x"},
    "headers-list": {"statusCode": 200, "headers": ["a", "b"]},
    "multi-headers-list": {"statusCode": 200, "multiValueHeaders": ["x"]},
    "header-outside-latin1": {"statusCode": 200, "headers": {"X-Emoji": "\U0001F600"}},
    "header-crlf": {"statusCode": 200, "headers": {"X-Split": "a\r\nX-Injected: 1"}},
    "header-name-space": {"statusCode": 200, "headers": {"X Bad": "1"}},
    "status-100": {"statusCode": 100},
    "status-600": {"statusCode": 600},
    "cookies-string": {"statusCode": 200, "cookies": "a=1"},
}


def lambda_handler(event, context):
    path = event.get("rawPath") or event.get("path")
    if path.startswith("/invalid/"):
        return INVALID[path.rpartition("/")[2]]
    if path == "/scalars":
        return {"statusCode": 200, "headers": {"X-None": None, "X-Five": 5, "X-True": True}, "body": "s"}
    if path == "/base64-string-false":
        return {"statusCode": 200, "body": "aGk=", "isBase64Encoded": "false"}
    if path == "/fail":
        raise RuntimeError("secret: the database password is hunter2")
    if path == "/plain":
        return {"hello": "world"}
    if path == "/text":
        return "just a string"
    if path == "/unicode":
        return {"name": "Zoë"}
    if path == "/number":
        return 42
    if path == "/list":
        return [1, "two", None]
    if path == "/none":
        return None
    if path == "/decimal":
        return {"price": decimal.Decimal("9.5"), "count": decimal.Decimal("3")}  # as DynamoDB's items hold numbers
    if path == "/set":
        return {"tags": {"a"}}
    if path == "/binary":
        return {"statusCode": 200, "headers": {"Content-Type": "image/png"}, "body": base64.b64encode(b"\x89PNG\x00\xff").decode(), "isBase64Encoded": True}
    if path == "/cookies":
        return {"statusCode": 201, "cookies": ["a=1; Path=/", "b=2"], "body": "set"}
    if path == "/multi":
        return {"statusCode": 200, "multiValueHeaders": {"X-Many": ["one", "two"]}, "headers": {"X-One": "1", "X-Many": "three"}, "body": "multi"}
    if path == "/bad":
        return "not a dict"
    if path == "/remaining":
        first = context.get_remaining_time_in_millis()
        return {"statusCode": 200, "body": json.dumps({"first": first, "name": context.function_name, "memory": context.memory_limit_in_mb, "arn": context.invoked_function_arn, "id": context.aws_request_id})}
    body = event.get("body")
    if body is not None and event.get("isBase64Encoded"):
        body = base64.b64decode(body).hex()
    return {
        "statusCode": 200,
        "headers": {"Content-Type": "application/json"},
        "body": json.dumps({"event": {k: v for k, v in event.items() if k != "body"}, "body": body}),
    }
