"""Behind a proxy (tests/reliability/test_idle_close.py): every answer is the size of the body it got."""


def main(req, res):
    res.set_body(str(len(req.body)))
