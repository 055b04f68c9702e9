"""Answers with what it was given, and writes each call to SEEN_LOG: what a request that ran the function carried."""

import json
import os
import time

CHUNK = b"x" * 16384


def record(req):
    seen = {
        "path": req.path,
        "protocol": req.environ.get("SERVER_PROTOCOL"),
        "body": req.get_data().decode("latin-1"),
        "headers": {name.lower(): value for name, value in req.headers.items()},
    }
    with open(os.environ["SEEN_LOG"], "a") as log:
        log.write(json.dumps(seen) + "\n")
    return seen


def main(req, res):
    seen = record(req)
    if req.path == "/sleep":
        time.sleep(float(req.args.get("s", "0.2")))
    if req.path == "/stream":  # a streamed answer: the server sends each chunk as the function yields it
        return (CHUNK for _ in range(int(req.args.get("chunks", "8"))))
    return seen
