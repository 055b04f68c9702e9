"""Work that never asks sdk.cancelled(): the watcher must still see its client leave."""

import logging
import time

from funcwsgi.environ import CANCELLATION_KEY


def main(req, res):
    time.sleep(float(req.args.get("seconds", "1")))
    # Read without asking the server: only the watcher can have set it.
    cause = req.environ[CANCELLATION_KEY].cause
    logging.getLogger("function").info("call %s cause %s", req.args.get("id", ""), cause)
    return "done"
