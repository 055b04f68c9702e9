"""The function: funcwsgi calls main(req, res) once per CloudEvent (or HTTP request).

A binary-mode CloudEvent arrives as an HTTP POST: its attributes are the ce-*
headers (ce-type, ce-source, ce-id) and its data is the body. This function
answers with a CloudEvent of its own, the same way.
"""

import os
import uuid

SOURCE = "/functions/" + os.environ.get("FUNC_NAME", "function")


def main(req, res):
    event_type = req.headers.get("ce-type")
    if event_type is None:
        res.set_code(400)
        res.set_body({"error": "expected a CloudEvent (ce-type, ce-source, ce-id headers)"})
        return
    data = req.get_json(silent=True) or {}
    res.set_header("ce-specversion", "1.0")
    res.set_header("ce-type", event_type + ".reply")
    res.set_header("ce-source", SOURCE)
    res.set_header("ce-id", str(uuid.uuid4()))
    res.set_body({"received": data, "from": req.headers.get("ce-source")})
