"""The framing corpus's function: every call is one JSON line (method, path, body) in the file FRAMING_CALLS names.

The line is written with one ``write`` on a file opened for appending, so
calls on several threads or processes never interleave; the answer is the
body's length, so the test sees both what the client got and what the
function saw. ``handler_async.py`` beside it is the same as ``async def``.
"""

import json
import os


def record(req):
    body = req.get_data()
    line = json.dumps({"method": req.method, "path": req.path, "body": body.decode("latin-1")}) + "\n"
    fd = os.open(os.environ["FRAMING_CALLS"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)
    return str(len(body))


def main(req, res):
    return record(req)
