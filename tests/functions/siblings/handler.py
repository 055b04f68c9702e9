from helper_siblings import GREETING


def main(req, res):
    res.set_body(GREETING)
