"""The hello world taking the request as a flask.Request (a module that imports Flask)."""

import flask


def main(request: flask.Request):
    return "Hello, world!" if request.method == "GET" else ""
