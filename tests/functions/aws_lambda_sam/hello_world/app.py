import base64
import json


def lambda_handler(event, context):
    if event["resource"] == "/upload":
        data = base64.b64decode(event["body"]) if event["isBase64Encoded"] else event["body"].encode()
        return {"statusCode": 200, "body": json.dumps({"size": len(data), "isBase64Encoded": event["isBase64Encoded"]})}
    return {
        "statusCode": 200,
        "body": json.dumps({
            "message": "hello world",
            "resource": event["resource"],
            "pathParameters": event["pathParameters"],
            "query": event["multiValueQueryStringParameters"],
            "remaining": context.get_remaining_time_in_millis(),
            "memory": context.memory_limit_in_mb,
        }),
    }
