"""Stops the moment it is told it timed out, and answers anyway: the runtime must still answer 408.

``?seconds=S`` answers ``in time`` after S seconds if it was not told by then; ``?blocked=S``
sleeps S seconds first, blocked in C, so that the watchdog answers the 408 on the wire itself.
"""

import time

import sdk


def main(req, res):
    time.sleep(float(req.args.get("blocked", "0")))
    began = time.monotonic()
    limit = float(req.args.get("seconds", "60"))
    while not sdk.cancelled():  # no pause: it may be told by the clock before the watchdog looks
        if time.monotonic() - began > limit:
            return "in time"
    res.set_code(200)
    return "done"
