"""The framing corpus's function written ``async def``: served on the event-loop path; records as its sync twin does."""

import json
import os


async def main(req, res):
    body = req.get_data()
    line = json.dumps({"method": req.method, "path": req.path, "body": body.decode("latin-1")}) + "\n"
    fd = os.open(os.environ["FRAMING_CALLS"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)
    return str(len(body))
