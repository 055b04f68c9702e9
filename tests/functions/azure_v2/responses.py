"""What the host answers for each return value, written as Azure's own samples return them."""

import json

import azure.functions as func

bp = func.Blueprint()


@bp.route(route="mimetype/{kind}")
def by_mimetype(req: func.HttpRequest) -> func.HttpResponse:
    kind = req.route_params["kind"]
    if kind == "text":
        return func.HttpResponse("plain")
    if kind == "html":
        return func.HttpResponse("<p>page</p>", mimetype="text/html", charset="latin-1")
    if kind == "json":
        return func.HttpResponse(json.dumps({"a": 1}), mimetype="application/json")
    if kind == "own":
        return func.HttpResponse("own", mimetype="application/json", headers={"Content-Type": "text/csv"})
    return func.HttpResponse(b"\x00\x01", mimetype="application/octet-stream", status_code=202)


@bp.route(route="headers")
def headers(req: func.HttpRequest) -> func.HttpResponse:
    response = func.HttpResponse("headers", headers={"X-Twice": "first"})
    response.headers.add("X-Twice", "second")
    response.headers.add("Set-Cookie", "a=1; Path=/")
    response.headers.add("Set-Cookie", "b=2; Path=/")
    return response


@bp.route(route="returns/{kind}")
def returns(req: func.HttpRequest) -> str:
    kind = req.route_params["kind"]
    if kind == "str":
        return "a string"
    if kind == "json-str":
        return json.dumps({"a": 1, "b": [True, None]})
    if kind == "response-object":
        return json.dumps({"statusCode": "201", "headers": {"X-From": "object", "Content-Type": "application/json"}, "body": {"made": True}})
    if kind == "scalar":
        return "true"
    if kind == "none":
        return None
    return {"not": "encodable"}
