def mian(req, res):
    pass


def helper():
    pass
