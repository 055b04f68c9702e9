"""The function: funcwsgi calls main(req, res) once per CloudEvent (or HTTP request).

The runtime decodes an incoming CloudEvent (binary or structured mode) into
req.cloud_event; a CloudEvent the function returns is sent back as the reply.
"""

import os

from cloudevents.core.v1.event import CloudEvent

SOURCE = "/functions/" + os.environ.get("FUNC_NAME", "function")


def main(req, res):
    event = req.cloud_event
    if event is None:
        res.set_code(400)
        res.set_body({"error": "expected a CloudEvent (ce-type, ce-source, ce-id, ce-specversion headers)"})
        return None
    attributes = event.get_attributes()
    reply = {"received": event.get_data(), "from": attributes["source"]}
    return CloudEvent({"type": attributes["type"] + ".reply", "source": SOURCE, "datacontenttype": "application/json"}, reply)
