"""A Fission python function: main() reads flask.request, as in Fission's python environment.

Locally funcwsgi calls main() inside a Flask request context; as a Fission environment it
loads it on /v2/specialize (functionName handler.main). Nothing here imports funcwsgi.
"""

from flask import jsonify, request


def main():
    body = request.get_json(silent=True) or {}
    name = request.args.get("name") or body.get("name") or request.headers.get("X-Fission-Params-Name") or "world"
    return jsonify(message=f"Hello, {name}!")
