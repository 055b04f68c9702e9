def main(req, res)
    return "missing colon"
