"""The conformance fixture's core paths as an Azure Functions app (v2), with an empty routePrefix."""

import json
import time

import azure.functions as func

SECRET = "conformance-secret-7f3a"
app = func.FunctionApp(http_auth_level=func.AuthLevel.ANONYMOUS)


@app.route(route="hello")
def hello(req: func.HttpRequest) -> func.HttpResponse:
    return func.HttpResponse("hello")


@app.route(route="json")
def as_json(req: func.HttpRequest) -> func.HttpResponse:
    return func.HttpResponse(json.dumps({"a": 1, "list": [1, "two"], "text": "ü"}), mimetype="application/json")


@app.route(route="status/{code:int}")
def status(req: func.HttpRequest) -> func.HttpResponse:
    code = int(req.route_params["code"])
    return func.HttpResponse(f"status {code}", status_code=code)


@app.route(route="headers")
def headers(req: func.HttpRequest) -> func.HttpResponse:
    return func.HttpResponse("", headers={"X-Conformance": "yes"})


@app.route(route="echo", methods=["POST"])
def echo(req: func.HttpRequest) -> func.HttpResponse:
    return func.HttpResponse(req.get_body(), headers={"Content-Type": req.headers.get("content-type", "application/octet-stream")})


@app.route(route="request")
def request(req: func.HttpRequest) -> func.HttpResponse:
    query = {}
    for pair in filter(None, req.url.partition("?")[2].split("&")):
        key, _, value = pair.partition("=")
        query.setdefault(key, []).append(value)
    return func.HttpResponse(json.dumps({"method": req.method, "path": "/request", "query": query}), mimetype="application/json")


@app.route(route="raise")
def fail(req: func.HttpRequest) -> func.HttpResponse:
    raise RuntimeError(SECRET)


@app.route(route="sleep")
def sleep(req: func.HttpRequest) -> func.HttpResponse:
    time.sleep(float(req.params.get("seconds", "1")))
    return func.HttpResponse("slept")


@app.route(route="size", methods=["POST"])
def size(req: func.HttpRequest) -> func.HttpResponse:
    return func.HttpResponse(str(len(req.get_body())))
