def main(req, res):
    def chunks():
        yield "first\n"
        if req.path == "/fail":
            raise ValueError("broke mid-stream")
        yield "second\n"

    res.set_header("Content-Type", "text/event-stream")
    return chunks()
