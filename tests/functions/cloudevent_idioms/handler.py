# Reads the incoming CloudEvent in every idiom of both cloudevents generations, and
# returns or publishes events made with whichever generation is installed.
import cloudevents

import sdk

GENERATION = int(cloudevents.__version__.split(".")[0])

if GENERATION >= 2:
    from cloudevents.core.v1.event import CloudEvent as LibraryEvent
else:
    from cloudevents.http import CloudEvent as LibraryEvent

FIXED = {"id": "fixed-1", "time": "2026-01-02T03:04:05Z", "source": "/idioms"}


def main(req, res):
    event = sdk.get_cloud_event()
    if req.path == "/read":
        time = event.get_time()
        return {
            "class": f"{type(event).__module__}.{type(event).__qualname__}",
            "same": event is req.cloud_event,
            "item": event["type"], "get": event.get("subject"), "get-default": event.get("nope", "d"),
            "in": ["time" in event, "myext" in event], "iter": sorted(event), "len": len(event),
            "data": event.data, "get_data": event.get_data(), "get_attributes": event.get_attributes(),
            "getters": [event.get_type(), event.get_source(), event.get_id(), event.get_specversion(),
                        event.get_datacontenttype(), event.get_dataschema(), event.get_subject()],
            "time": None if time is None else [time.isoformat(), time.tzinfo is not None],
            "extension": event.get_extension("myext"), "extensions": event.get_extensions(),
            "repr": repr(event).startswith("CloudEvent(attributes={"),
            # A new event made from its attributes gets a time the incoming one never had.
            "equal": [event == event, event == sdk.CloudEvent(event.get_attributes(), event.get_data())],
        }
    if req.path == "/reply-text":
        return _library_event({"type": "reply.text", "datacontenttype": "text/plain; charset=utf-8"}, "hello ü")
    if req.path == "/reply-json":
        return _library_event({"type": "reply.json", "subject": "s"}, {"n": [1, "ü"]})
    if req.path == "/reply-bytes":
        return _library_event({"type": "reply.bytes", "datacontenttype": "application/octet-stream"}, b"\x00\x01")
    if req.path == "/reply-own":
        return sdk.CloudEvent({**FIXED, "type": "reply.own"}, {"own": True})
    if req.path == "/publish-library":
        sdk.publish_cloud_event(_library_event({"type": "published.text", "datacontenttype": "text/plain"}, "hello ü"))
    elif req.path == "/publish-bytes":
        sdk.publish_cloud_event(_library_event({"type": "published.bytes"}, b"\x00\x01"))
    elif req.path == "/emit":
        sdk.emit_cloud_event("emitted", "/idioms", {"n": 1}, {"id": "fixed-2", "time": FIXED["time"]})
    return "", 204


def _library_event(attributes, data):
    attributes = {**FIXED, **attributes}
    if GENERATION >= 2:  # 2.x wants time as a datetime
        from datetime import datetime

        attributes["time"] = datetime.fromisoformat(attributes["time"])
    return LibraryEvent(attributes, data)
