"""A function that exercises the sdk and the observability layers, one path each."""

import os

import requests

import sdk
from funcwsgi.compat.cloudevents_lib import attribute_strings, data_of, make_event


def main(req, res):
    path = req.path
    if path == "/work":
        with sdk.get_tracer().start_as_current_span("work"):
            sdk.get_logger().info("got order", extra={"order": 7})
            if "call" in req.args:
                requests.get(req.args["call"], timeout=5)
            if "publish" in req.args:
                sdk.emit_cloud_event("order.created", "/shop", {"id": 7})
        res.set_code(204)
        return None
    if path == "/fail":
        raise RuntimeError("the database is down")
    if path == "/unavailable":
        return "try later", 503
    if path == "/marked-failure":
        # What the timeout layer does when it answers for a function that ran too long.
        req.environ["funcwsgi.failure"] = "timeout"
        return "too slow", 408
    if path == "/stream":
        return iter(["a", "bb", "ccc"])
    if path == "/event":
        event = req.cloud_event
        same = event is sdk.get_cloud_event()
        if event is None:
            return {"event": None, "same": same, "body": req.get_data(as_text=True)}
        return {"event": attribute_strings(event), "data": data_of(event), "same": same, "body": req.get_data(as_text=True)}
    if path == "/reply":
        return make_event({"type": "order.accepted", "source": "/orders", "subject": "7"}, {"accepted": True})
    if path == "/pid":
        return str(os.getpid())
    if path == "/metadata":
        return {
            "name": sdk.get_function_name(),
            "namespace": sdk.get_namespace(),
            "runtime": sdk.get_runtime(),
            "timeout": sdk.get_timeout(),
            "body_limit": sdk.get_body_size_limit(),
            "labels": sdk.get_labels(),
            "annotations": sdk.get_annotations(),
        }
    return "ok"
