"""handler.py's function as ``async def``: served on the event loop (HANDLER_MODULE_NAME=handler_async)."""

import asyncio

from handler import CHUNK, record


async def main(req, res):
    seen = record(req)
    if req.path == "/sleep":
        await asyncio.sleep(float(req.args.get("s", "0.2")))
    if req.path == "/stream":
        return (CHUNK for _ in range(int(req.args.get("chunks", "8"))))
    return seen
