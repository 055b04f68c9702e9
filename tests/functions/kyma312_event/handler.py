# Kyma <=3.12 functions, in the shapes of Kyma's Function specification.


def main(event, context):
    message = "Hello World from the Kyma Function " + context["function-name"] + " running on " + context["runtime"] + "!"
    print(message)
    return message


def cloud_event(event, context):
    return {
        "type": event["ce-type"],
        "source": event["ce-source"],
        "id": event["ce-id"],
        "specversion": event["ce-specversion"],
        "eventtypeversion": event["ce-eventtypeversion"],
        "extension": event.get("ce-myextension"),
        "data": event["data"],
    }


def request_api(event, context):
    request = event["extensions"]["request"]
    return {
        "method": request.method,
        "args": request.args.get("q"),
        "query": request.query.get("q"),
        "json": request.json,
        "get_data": request.get_data().decode(),
        "header": request.headers.get("x-custom"),
    }


def status_tuple(event, context):
    return "", 204


def reply(event, context):
    return event.buildResponseCloudEvent("reply-1", "order.replied", {"ok": True})
