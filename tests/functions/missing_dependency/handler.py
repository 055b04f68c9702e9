import numpy_that_is_not_installed  # noqa: F401


def main(req, res):
    pass
