"""A function whose module has a ready that is a value, not a hook."""

ready = "yes"


def main(req, res):
    res.set_body("never served")
