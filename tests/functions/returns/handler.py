"""Returns a value of the kind the path names, to check return coercion."""

from werkzeug.wrappers import Response


def _stream():
    yield "one,"
    yield b"two,"
    yield "three"


class Unsupported:
    pass


RESULTS = {
    "none": lambda: None,
    "str": lambda: "<script>alert(1)</script>",
    "bytes": lambda: b"\x00raw",
    "bytearray": lambda: bytearray(b"ba"),
    "dict": lambda: {"a": 1, "b": [1, 2]},
    "list": lambda: [1, "two"],
    "tuple-status": lambda: ("made", 201),
    "tuple-status-text": lambda: ("teapot", "418 I'm a teapot"),
    "tuple-headers": lambda: ("with headers", {"X-A": "1"}),
    "tuple-header-list": lambda: ({"x": 1}, [("X-B", "2")]),
    "tuple-all": lambda: ("", 204, {"X-C": "3"}),
    "tuple-content-type": lambda: ("<p>ok</p>", 200, {"Content-Type": "text/html"}),
    "response": lambda: Response("from werkzeug", status=203, mimetype="text/csv"),
    "generator": _stream,
    "tuple-response": lambda: (Response("r", mimetype="text/csv"), 201, {"X-D": "4"}),
    "unsupported": lambda: Unsupported(),
    "int": lambda: 42,
    "bad-tuple": lambda: ("a", 1, 2, 3),
    "bad-status": lambda: ("a", 1000),
}


def main(req):
    return RESULTS[req.path.strip("/")]()
