"""tests/functions/h2_echo as an async function: served on the event loop (granian's ASGI interface)."""

import asyncio
import json
import os


async def main(req, res):
    seen = {
        "path": req.path,
        "protocol": req.environ.get("SERVER_PROTOCOL"),
        "body": req.get_data().decode("latin-1"),
        "headers": {name.lower(): value for name, value in req.headers.items()},
    }
    with open(os.environ["SEEN_LOG"], "a") as log:
        log.write(json.dumps(seen) + "\n")
    if req.path == "/sleep":
        await asyncio.sleep(float(req.args.get("s", "0.2")))
    if req.path == "/stream":  # a streamed answer: the server sends each chunk as the function yields it
        return (b"x" * 16384 for _ in range(int(req.args.get("chunks", "8"))))
    return seen
