# A Kyma python314 function: Flask's request and the sdk, no parameters.
from flask import request

import sdk


def main():
    if request.path == "/metadata":
        return {
            "function": sdk.get_function_name(),
            "namespace": sdk.get_namespace(),
            "runtime": sdk.get_runtime(),
            "timeout": sdk.get_timeout(),
        }
    event = sdk.get_cloud_event()
    if event is None:
        return "expected a CloudEvent", 400
    attributes = event.get_attributes()
    with sdk.get_tracer().start_as_current_span("python314-work"):
        sdk.get_logger().info("processing %s", attributes["id"])
        sdk.emit_cloud_event(
            attributes["type"] + ".processed", "/kyma/python314", {"input": event.get_data(), "from": request.path},
            {"subject": attributes.get("subject") or "none"},
        )
    return "", 202
