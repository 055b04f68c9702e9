"""The I/O-bound function, async: it waits 50 ms (a database, another service), then answers."""

import asyncio


async def main(req, res):
    await asyncio.sleep(0.05)
    return "Hello, world!"
