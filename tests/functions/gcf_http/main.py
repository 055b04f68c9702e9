# Google Cloud Functions HTTP functions, in the shapes of Google's HTTP samples.
from flask import abort, jsonify
from markupsafe import escape


def hello_http(request):
    request_json = request.get_json(silent=True)
    request_args = request.args
    if request_json and "name" in request_json:
        name = request_json["name"]
    elif request_args and "name" in request_args:
        name = request_args["name"]
    else:
        name = "World"
    return f"Hello {escape(name)}!"


def hello_method(request):
    if request.method == "GET":
        return "Hello World!"
    return abort(405)


def hello_content(request):
    content_type = request.headers["content-type"]
    if content_type == "application/json":
        request_json = request.get_json(silent=True)
        if request_json and "name" in request_json:
            name = request_json["name"]
        else:
            raise ValueError("JSON is invalid, or missing a 'name' property")
    elif content_type == "application/octet-stream":
        name = request.data.decode()
    elif content_type == "text/plain":
        name = request.data.decode()
    elif content_type == "application/x-www-form-urlencoded":
        name = request.form.get("name")
    else:
        raise ValueError(f"Unknown content type: {content_type}")
    return f"Hello {escape(name)}!"


def cors_enabled(request):
    if request.method == "OPTIONS":
        headers = {
            "Access-Control-Allow-Origin": "*",
            "Access-Control-Allow-Methods": "GET",
            "Access-Control-Allow-Headers": "Content-Type",
            "Access-Control-Max-Age": "3600",
        }
        return ("", 204, headers)
    return ("Hello World!", 200, {"Access-Control-Allow-Origin": "*"})


def json_api(request):
    import flask

    return jsonify(is_flask_request=isinstance(request, flask.Request), same=request is flask.request._get_current_object())
