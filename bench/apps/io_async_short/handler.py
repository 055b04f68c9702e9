"""The I/O-bound function, async, with a short wait (5 ms): what the loop path costs per call, in-process.

`bench/apps/io_async` waits 50 ms, the wait the HTTP benchmark models; here the
wait is shorter so a run of thousands of calls under callgrind stays short,
while every call still parks its coroutine on the loop and is resumed by a timer.
"""

import asyncio


async def main(req, res):
    await asyncio.sleep(0.005)
    return "Hello, world!"
