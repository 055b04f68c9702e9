"""handler.py's function as ``async def``: served on the event loop (HANDLER_MODULE_NAME=handler_async)."""

from handler import record


async def main(req, res):
    return record(req)
