"""A function whose start() hook wants an argument the runtime never passes."""


def main(req, res):
    res.set_body("never served")


def start(database_url):
    raise AssertionError("the runtime must refuse this hook before calling it")
