# A Kyma python314 function: no parameters, the request through Flask.
from flask import abort, jsonify, make_response, request


def main():
    if request.path == "/json":
        payload = request.get_json(silent=True) or {}
        return jsonify(greeting=f"Hello {payload.get('name', 'world')}", method=request.method)
    if request.path == "/created":
        return jsonify(id=7), 201
    if request.path == "/tuple":
        return {"query": request.args.get("q")}, 202, {"X-Kyma": "python314"}
    if request.path == "/empty":
        return "", 204
    if request.path == "/made":
        made = make_response("made", 200)
        made.headers["X-Made"] = "yes"
        return made
    if request.path == "/forbidden":
        abort(403)
    if request.path == "/form":
        return {"form": request.form.to_dict()}
    return request.getData() if hasattr(request, "getData") else request.get_data()
