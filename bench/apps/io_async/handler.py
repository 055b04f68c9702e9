"""The I/O-bound function, async: it waits 50 ms (a database, another service), then answers."""

import asyncio
import os

WAIT = float(os.environ.get("BENCH_WAIT_SECONDS", "0.05"))  # bench/overload.py waits longer


async def main(req, res):
    await asyncio.sleep(WAIT)
    return "Hello, world!"
