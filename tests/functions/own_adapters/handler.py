from adapters import KIND


def main(req, res):
    return KIND
