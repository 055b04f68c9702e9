def main(event, context):
    request = event["extensions"]["request"]
    return {
        "data": event["data"] if not isinstance(event["data"], bytes) else event["data"].decode(),
        "ce": {k: v for k, v in event.items() if k.startswith("ce-")},
        "context": context,
        "method": request.method,
    }
