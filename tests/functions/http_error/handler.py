from werkzeug.exceptions import abort


def main(req, res):
    if req.path == "/missing":
        abort(404)
    if req.path == "/forbidden":
        abort(403, "members only")
    if req.path == "/json":
        return req.get_json()
    if req.path == "/method":
        abort(405, valid_methods=["POST"])
    return "fine"
