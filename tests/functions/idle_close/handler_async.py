"""As handler.py, served on the event loop."""


async def main(req, res):
    res.set_body(str(len(req.body)))
