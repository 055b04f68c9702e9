"""Work that never asks sdk.cancelled(): the watcher must still see its client leave.

``?publish=1`` publishes a CloudEvent instead (to a receiver that answers late) and logs how it ended.
"""

import logging
import time

import sdk
from funcwsgi.environ import CANCELLATION_KEY


def main(req, res):
    if req.args.get("publish"):
        try:
            sdk.emit_cloud_event("order.created", "/shop", {"id": 7})
        except sdk.PublishError as error:
            logging.getLogger("function").info("publish %s ended: %s", req.args.get("id", ""), error)
        return "done"
    time.sleep(float(req.args.get("seconds", "1")))
    # Read without asking the server: only the watcher can have set it.
    cause = req.environ[CANCELLATION_KEY].cause
    logging.getLogger("function").info("call %s cause %s", req.args.get("id", ""), cause)
    return "done"
