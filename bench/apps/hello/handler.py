"""The function every funcwsgi target serves."""


def main(req, res):
    res.set_body("Hello, world!")
