"""The conformance fixture's core paths as a Fission python function: main() with flask.request."""

import time

from flask import Response, jsonify, request

SECRET = "conformance-secret-7f3a"


def main():
    path = request.path
    if path == "/hello":
        return "hello"
    if path == "/json":
        return jsonify({"a": 1, "list": [1, "two"], "text": "ü"})
    if path.startswith("/status/"):
        code = int(path.rsplit("/", 1)[1])
        return f"status {code}", code
    if path == "/headers":
        return "", 200, {"X-Conformance": "yes"}
    if path == "/echo":
        return Response(request.get_data(), content_type=request.headers.get("Content-Type", "application/octet-stream"))
    if path == "/request":
        return jsonify({"method": request.method, "path": path, "query": request.args.to_dict(flat=False)})
    if path == "/raise":
        raise RuntimeError(SECRET)
    if path == "/sleep":
        time.sleep(float(request.args.get("seconds", "1")))
        return "slept"
    if path == "/size":
        return str(len(request.get_data()))
    return f"fixture {request.method} {path}"
