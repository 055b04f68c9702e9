"""Exercises the res object: the path names what to do."""


def main(req, res):
    action = req.path.strip("/")
    if action == "code":
        res.set_code(201)
        res.set_body("created")
    elif action == "camel":
        res.setCode(202).setHeader("X-Camel", "yes")
    elif action == "headers":
        res.set_header("X-One", "1").add_header("X-Many", "a").add_header("X-Many", "b")
        res.set_body("with headers")
    elif action == "json":
        res.set_json({"ok": True, "echo": req.get_json()})
    elif action == "text":
        res.set_text("<b>hi</b>", content_type="text/html; charset=utf-8")
    elif action == "data":
        res.set_data(b"\x00\x01", content_type="image/x-test")
    elif action == "body-dict":
        res.set_body({"a": 1})
    elif action == "return-wins":
        res.set_code(201)
        res.set_header("X-From-Res", "kept")
        res.set_body("ignored")
        return {"returned": True}
    elif action == "echo":
        res.set_data(req.body, content_type=req.content_type or "application/octet-stream")
    elif action == "request":
        res.set_json(
            {
                "method": req.method,
                "path": req.path,
                "root_path": req.root_path,
                "args": req.args.to_dict(flat=False),
                "header": req.headers.get("X-Test"),
                "form": req.form.to_dict(),
                "files": {name: f.read().decode() for name, f in req.files.items()},
            }
        )
    elif action == "bad-header":
        res.set_header("X-Injected", "a\r\nSet-Cookie: evil=1")
    elif action == "bad-code":
        res.set_code(42)
    else:
        res.set_body(f"{req.method} {req.path}")
