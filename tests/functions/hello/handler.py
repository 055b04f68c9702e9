def main(req, res):
    res.set_code(204)
