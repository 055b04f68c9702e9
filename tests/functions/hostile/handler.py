"""The function the hostile-client matrix serves: the path names what to do."""

import time

BLOCK = b"x" * 1024


def main(req, res):
    action = req.path.strip("/")
    if action == "echo":  # reads the whole body, as most functions taking a POST do
        return {"size": len(req.get_data())}
    if action == "big":  # a large answer, for clients that read slowly
        return BLOCK * int(req.args.get("kb", "1024"))
    if action == "sleep":
        time.sleep(float(req.args.get("s", "0.2")))
        return "slept"
    return "hello"
