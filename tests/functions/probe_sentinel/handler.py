def main(req, res):
    """Answers every call with 418, so a 200 on a probe path can only come from the runtime itself."""
    res.set_code(418)
    res.set_text(f"function saw {req.path}")
