"""An async function that waits only on /wait, and says where its first step ran."""

import asyncio

from funcwsgi.eventloop.bridge import on_loop_path


async def main(req, res):
    first_step_in_the_calls_greenlet = on_loop_path()
    if req.path == "/wait":
        await asyncio.sleep(0.001)
    return {"first_step_in_greenlet": first_step_in_the_calls_greenlet, "path": req.path}
