def main(req, res):
    raise RuntimeError("secret database password is hunter2")
