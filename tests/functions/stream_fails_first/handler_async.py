"""The same as handler.py, from an async def function (the event-loop paths)."""

from handler import chunks


async def main(req, res):
    return chunks(req.path)
