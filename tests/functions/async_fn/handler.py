import asyncio


async def main(req, res):
    await asyncio.sleep(0)
    res.set_body({"async": True, "path": req.path})
