def main(req, res):
    name = req.args.get("name", "world")
    res.set_body({"message": f"Hello, {name}!"})
