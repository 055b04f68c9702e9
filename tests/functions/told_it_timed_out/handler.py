"""Stops the moment it is told it timed out, and answers anyway: the runtime must still answer 408.

``?seconds=S`` answers ``in time`` after S seconds if it was not told by then.
"""

import time

import sdk


def main(req, res):
    began = time.monotonic()
    limit = float(req.args.get("seconds", "60"))
    while not sdk.cancelled():  # no pause: it may be told by the clock before the watchdog looks
        if time.monotonic() - began > limit:
            return "in time"
    res.set_code(200)
    return "done"
