# Kubeless's Python examples: echo the event's data, print the event to the log.
import json


def handler(event, context):
    print(event)
    return event["data"]


def metadata(event, context):
    request = event["extensions"]["request"]
    return json.dumps(
        {
            "event-id": event["event-id"],
            "event-type": event["event-type"],
            "event-time": event["event-time"],
            "event-namespace": event["event-namespace"],
            "function-name": context["function-name"],
            "timeout": context["timeout"],
            "runtime": context["runtime"],
            "memory-limit": context["memory-limit"],
            "method": request.method,
            "user-agent": request.get_header("User-Agent"),
            "name": request.query.name,
            "names": request.query.getall("name"),
            "missing": request.query.missing,
            "header-names": sorted(name.lower() for name in request.headers),
        }
    )


def raw_body(event, context):
    request = event["extensions"]["request"]
    body = request.body
    first = body.read(3)
    rest = body.read()
    again = request.body.read()  # bottle rewound the body file on each access
    return {
        "first": first.decode(), "rest": rest.decode(), "again": again.decode(),
        "json": request.json, "data_type": type(event["data"]).__name__,
    }


def utf(event, context):
    # What bottle gave: PATH_INFO and header values re-read as UTF-8.
    request = event["extensions"]["request"]
    return {"path": request.path, "url": request.url, "header": request.get_header("X-Utf"), "headers": request.headers["X-Utf"]}
