"""Hello world, async."""


async def main(req, res):
    return "Hello, world!"
