"""One log record of each kind per path: the function's own line, a failure, a timeout."""

import logging
import time

log = logging.getLogger("orders")


def main(req, res):
    if req.path == "/log":
        log.info("looked up the order")
        return "ok"
    if req.path == "/fail":
        raise RuntimeError("the database is down")
    if req.path == "/slow":
        for _ in range(200):  # Python between the sleeps: the timeout's interrupt lands at once
            time.sleep(0.05)
    return "done"
