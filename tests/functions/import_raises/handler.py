def _configure():
    raise KeyError("API_KEY")


_configure()


def main(req, res):
    pass
