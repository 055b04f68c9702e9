"""An AWS Lambda handler: funcwsgi hands it API Gateway's event (payload format 2.0) and a context.

Nothing here imports funcwsgi: the same file deploys to Lambda with `sam deploy`.
"""

import json


def lambda_handler(event, context):
    query = event.get("queryStringParameters") or {}
    body = json.loads(event["body"]) if event.get("body") and not event.get("isBase64Encoded") else {}
    name = query.get("name") or body.get("name") or "world"
    return {
        "statusCode": 200,
        "headers": {"Content-Type": "application/json"},
        "body": json.dumps({"message": f"Hello, {name}!"}),
    }
